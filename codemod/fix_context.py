"""What every fixer sees: the parsed tree, the recognised sites, the plan being built, findings."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Access, Assignment, BaseAssignment, ClassScope, GlobalScope, ImportAssignment

from ._tree import Tree, code_of, walk_same_scope
from .findings import Finding
from .plan import Plan
from .recognise import Helper, Site

__all__ = ["FixContext", "contains", "subtree"]

_STRATEGY_NAMES = ("strategy", "mirrored_strategy", "distribute_strategy")


@dataclass
class FixContext:
    tree: Tree
    sites: list[Site]
    helpers: list[Helper]
    path: str = "<string>"
    strategy: str = "mirrored"  # one of fixers.STRATEGIES
    plan: Plan = field(default_factory=Plan)
    findings: list[Finding] = field(default_factory=list)
    rewritten: list[Site] = field(default_factory=list)
    references: dict[int, list[cst.Name]] = field(default_factory=dict)
    # Rewrites of the whole module that run, in order, after the plan is applied.
    finishers: list[Callable[[cst.Module], cst.Module]] = field(default_factory=list)
    # Which findings are about which site (sites.py): those reported while `current_site` is set,
    # and every (node, finding) pair, for calls reported without being sites.
    current_site: Site | None = None
    site_findings: dict[int, list[Finding]] = field(default_factory=dict)
    reported_nodes: list[tuple[cst.CSTNode, Finding]] = field(default_factory=list)
    _strategy_names: dict[int, str] = field(default_factory=dict)
    _tf: str | None = None

    def report(self, node: cst.CSTNode, code: str, message: str, site: Site | None = None) -> None:
        """A finding at `node`; about `site` (or the site being planned, `current_site`)."""
        line, col = self.tree.position(node)
        finding = Finding(line, col, code, message, self.path)
        self.findings.append(finding)
        self.reported_nodes.append((node, finding))
        about = site or self.current_site
        if about is None:
            about = next((s for s in self.sites if s.call is node), None)
        if about is not None:
            self.site_findings.setdefault(id(about), []).append(finding)

    def names_in_use(self) -> set[str]:
        if not hasattr(self, "_in_use"):
            in_use: set[str] = set()
            for scope in set(self.tree.scopes.values()):
                if scope is None:
                    continue
                in_use |= {a.name for a in scope.assignments}
                in_use |= {a.node.value for a in scope.accesses if isinstance(a.node, cst.Name)}
            self._in_use = in_use
        return self._in_use

    def tf_name(self) -> str:
        """The module's own alias for TensorFlow, or `tf` (imported by the imports fixer)."""
        if self._tf is None:
            self._tf = _existing_tf_alias(self.tree.module)
            if self._tf is None:
                in_use = self.names_in_use()
                # (`tf` read but bound nowhere: a NameError as written, `tf` as its author meant it)
                # (`tf` bound only by a module-level `import tensorflow as tf` in a branch: the same
                # module, imported at the top)
                self._tf = "tf" if "tf" not in in_use or not self.tree.binds("tf") or self._imports_tensorflow_only(
                    "tf"
                ) else "tensorflow"
                self.plan.add_imports.append(("tensorflow", None, "tf" if self._tf == "tf" else None))
        return self._tf

    def _imports_tensorflow_only(self, name: str) -> bool:
        """Every binding of `name` in the module is `import tensorflow as <name>` at module level
        (inside a function it would make `<name>` a local, unbound where the strategy line reads it)."""
        scopes = [s for s in set(self.tree.scopes.values()) if s is not None]
        if any(name in s.assignments for s in scopes if not isinstance(s, GlobalScope)):
            return False
        bindings = [a for s in scopes for a in s.assignments[name]]
        return bool(bindings) and all(
            isinstance(a, ImportAssignment) and isinstance(a.node, cst.Import) and any(
                code_of(alias.name) == "tensorflow" and alias.asname is not None
                and code_of(alias.asname.name) == name for alias in a.node.names
            )
            for a in bindings
        )

    def strategy_name(self, scope_node: cst.CSTNode) -> str:
        """A free name for the strategy: `strategy` unless the module already uses it."""
        key = id(scope_node)
        if key not in self._strategy_names:
            taken = self.names_in_use()
            candidates = [*_STRATEGY_NAMES, *(f"strategy_{i}" for i in range(2, 1000))]
            self._strategy_names[key] = next(c for c in candidates if c not in taken)
        return self._strategy_names[key]

    def _site_assignment(self, site: Site) -> Assignment | None:
        if not isinstance(site.target, cst.Name):
            return None
        scope = self.tree.scopes.get(site.target)
        if scope is None:
            return None
        for assignment in scope.assignments[site.target.value]:
            if isinstance(assignment, Assignment) and assignment.node is site.target:
                return assignment
        return None

    def references_of(self, site: Site) -> list[cst.Name]:
        """Reads of the parallel model that may see this site's value."""
        assignment = self._site_assignment(site)
        if assignment is None:
            return []
        return [a.node for a in assignment.references if isinstance(a.node, cst.Name)]

    def safe_rename(
        self, site: Site, removed: cst.CSTNode | None = None, aliases: Sequence[cst.CSTNode] = ()
    ) -> list[cst.Name] | None:
        """Every read of the parallel name, when renaming them to the template provably changes nothing.
        `removed`: a statement the rewrite removes; `aliases`: `parallel = model` statements that go
        too (the caller checked they bind the template itself, on other paths than the call)."""
        assignment = self._site_assignment(site)
        if assignment is None or site.template is None:
            return None
        scope = assignment.scope
        if isinstance(scope, ClassScope):
            return None  # a class attribute (`Trainer.parallel.fit(...)` elsewhere): its name stays
        target = cst.ensure_type(site.target, cst.Name).value
        gone = [*([removed] if removed is not None else []), *aliases]

        def goes(node: cst.CSTNode | None) -> bool:
            return any(contains(self.tree, g, node) for g in gone)

        others = [a for a in scope.assignments[target] if a is not assignment and not goes(getattr(a, "node", None))]
        window = self._rebinding_window(site, assignment, others) if others else None
        if others and (window is None or aliases):
            return None
        template_root = site.template
        while isinstance(template_root, cst.Attribute):
            template_root = template_root.value
        root = cst.ensure_type(template_root, cst.Name).value
        site_order = self.tree.order(site.call)
        accesses: list[cst.Name] = []
        # reads of the site's value, and of an alias's (`parallel.fit(...)` right after `parallel = model`)
        bindings = [assignment, *(a for a in scope.assignments[target] if a is not assignment
                                  and any(contains(self.tree, g, getattr(a, "node", None)) for g in aliases))]
        reads = list({id(r): r for b in bindings for r in b.references}.values())
        reads.sort(key=lambda r: self.tree.order(r.node))
        for access in reads:
            if window is not None:
                if access.scope is not scope:
                    return None  # a function reading the name may run while either binding holds
                if not window[0] < self.tree.order(access.node) < window[1]:
                    continue  # the read of another binding of the name
            if not isinstance(access.node, cst.Name) or _is_del(self.tree, access):
                return None
            if window is None and any(
                r is not assignment and not goes(getattr(r, "node", None))
                for r in access.referents
            ):
                return None
            current = access.scope
            while current is not scope:  # a nested scope may have its own `model`
                if current is None or isinstance(current, GlobalScope) or root in current.assignments:
                    return None
                current = current.parent
            accesses.append(access.node)
        # The template must not be rebound after the site (it would stop being the parallel model's twin),
        # or, when the name is bound again later, before the last read of this binding.
        # Source order stands in for lines: the site is alone on its line (recognise.py checks).
        template_code = self.tree.code(site.template)
        limit = max((self.tree.order(a) for a in accesses), default=site_order) if window else float("inf")
        # (an alias's own branch, `else: model = build(); parallel = model`, runs instead of the call's,
        # not after it: the template it binds there is the one its alias names)
        other_paths = [
            block for block in (self.tree.parent(self.tree.statement_of(a) or a) for a in aliases)
            if block is not None and not contains(self.tree, block, site.call)
        ]
        for node in same_scope_targets(self.tree, self.tree.enclosing_scope_node(site.call)):
            if (
                self.tree.code(node) == template_code
                and site_order < self.tree.order(node) < limit
                and not contains(self.tree, site.call, node)
                and not any(contains(self.tree, block, node) for block in other_paths)
            ):
                return None
        return accesses

    def _rebinding_window(
        self, site: Site, assignment: Assignment, others: Sequence[BaseAssignment]
    ) -> tuple[int, float] | None:
        """`parallel = multi_gpu_model(model, 2)` bound again later in the same straight-line block
        (the template wrapped anew after unfreezing): the source orders between which a read sees
        this binding, when every binding of the name is a statement of the module's or function's
        own body (no loop or branch can make a read see another one)."""
        scope_node = self.tree.enclosing_scope_node(site.call)
        body = scope_node if isinstance(scope_node, cst.Module) else getattr(scope_node, "body", None)
        nodes = [assignment.node, *(getattr(a, "node", None) for a in others)]
        if body is None or not all(isinstance(a, Assignment) for a in others):
            return None
        for node in nodes:
            statement = self.tree.statement_of(node) if node is not None else None
            if statement is None or self.tree.parent(statement) is not body:
                return None
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                return None
        start = self.tree.order(assignment.node)
        later = [self.tree.order(n) for n in nodes[1:] if n is not None and self.tree.order(n) > start]
        return start, min(later, default=float("inf"))


def contains(tree: Tree, outer: cst.CSTNode | None, inner: cst.CSTNode | None) -> bool:
    """`inner` is `outer` or lies anywhere under it; False when either is missing."""
    if inner is None or outer is None:
        return False
    return inner is outer or any(a is outer for a in tree.ancestors(inner))


def subtree(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node` and every node under it."""
    found: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _is_del(tree: Tree, access: Access) -> bool:
    return any(isinstance(a, cst.Del) for a in tree.ancestors(access.node))


def same_scope_targets(tree: Tree, scope_node: cst.CSTNode) -> list[cst.CSTNode]:
    """Every name or attribute bound or deleted in `scope_node`'s own scope (not nested ones)."""
    targets: list[cst.CSTNode] = []
    for node in _walk(scope_node):
        if isinstance(node, cst.AssignTarget):
            targets.extend(_flat(node.target))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)):
            targets.extend(_flat(node.target))
        elif isinstance(node, cst.Del):  # `del model` after the site: the name is gone, not renamable
            targets.extend(_flat(node.target))
        elif isinstance(node, cst.AsName):
            targets.extend(_flat(node.name))
    return targets


def _flat(target: cst.CSTNode) -> list[cst.CSTNode]:
    """The names a target binds (or deletes): `a, (b, c)` -> a, b, c."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _flat(element.value)]
    if isinstance(target, cst.StarredElement):
        return _flat(target.value)
    return [target]


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    body = node.body if isinstance(node, cst.FunctionDef) else node
    return walk_same_scope(body)


def _existing_tf_alias(module: cst.Module) -> str | None:
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        dotted = code_of(alias.name)
                        if dotted == "tensorflow":
                            return alias.evaluated_alias if alias.asname else "tensorflow"
    return None
