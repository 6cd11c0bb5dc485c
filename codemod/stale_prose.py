"""Prose anywhere in a migrated file that still describes what the migration removed.

stale_comments.py drops the comments on the code the rewrite touches. A file also talks about the
old mechanics elsewhere: a header `# data parallel with make_parallel`, a callback's docstring
"save the template at layers[-2] of the parallel model", a notebook's markdown. After the rewrite
these say something false, and a reviewer stops at them. What this module does with them:

- The helper named as the tool ("with `multi_gpu_model`", "using make_parallel", "via
  ModelMGPU") or as the subject of what the strategy does as well ("multi_gpu_model splits each
  batch") becomes `tf.distribute.MirroredStrategy`, and a model wrapped or trained through it
  ("wraps it in multi_gpu_model") is trained under it: the sentence is true again. Once every site
  is rewritten, "the parallel model" in a sentence that says nothing else of the old pair
  ("Compile and train the parallel model.") is "the model": there is one.
- A comment (its lines up to one that ends a sentence, or an end-of-line comment) every
  sentence of which names something removed goes: a name the old code bound and the new code no
  longer does (`make_parallel`, `gpu_model`), and, when every site of the file was rewritten,
  the wrapper's mechanics (`layers[-2]`, "the parallel model", "shares weights with the GPU copy").
- A docstring loses the sentences naming them (or the clause after a `;` that alone does); a
  function's or class's left with none goes, a module's keeps its first paragraph.
- Anything else still naming them (a sentence among others in a comment, a module's summary, a
  markdown heading, a message or help string in the code) is reported (MGPU305) with its line:
  the codemod does not write prose.

Pure text functions plus one libcst pass; core.py and notebook.py call them after the rewrite.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import libcst as cst

from .findings import Finding
from .stale_comments import CELL_MARKER, commented_block
from .stale_comments import commented_code as _commented_code

__all__ = ["MECHANICS", "Prose", "bound_names", "docstring_without_stale", "drop_stale", "findings", "markdown"]

# The old helpers: named as the tool, they become the strategy.
HELPERS: Final = ("multi_gpu_model", "make_parallel", "ModelMGPU", "to_multi_gpu")
STRATEGY: Final = "tf.distribute.MirroredStrategy"
_DOTTED: Final = r"(?:[A-Za-z_]\w*\.)*"  # `keras.utils.multi_gpu_model`, as Keras's docs wrote it
_TOOL: Final = re.compile(
    # ("the explicit list passed to multi_gpu_model": the GPU ids, which the strategy is given now;
    # not "the model passed to make_parallel", round 49, ai15)
    r"\b(?P<by>with|using|uses|use|via|through|(?:list|ids|devices)(?:\s+of\s+(?:GPU\s+)?ids)?\s+passed\s+to"
    r"|pass(?:es)?\s+(?:the\s+|an\s+)?(?:explicit\s+)?(?:GPU\s+|device\s+)?(?:list|ids|devices)\s+to)"
    r"(?P<space>\s+)(?P<tick>`{0,2})" + _DOTTED + r"(?P<name>"
    + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)(?![\w(])"
    r"(?!\s+(?:wrapper|helper|class|trick|function|call|gist|layer)s?\b)",  # "with the ModelMGPU wrapper"
    re.IGNORECASE,
)
# "via the classic make_parallel helper", "CNN with the ModelMGPU wrapper": the tool named with its
# noun at the end of a clause, the strategy now
_TOOL_HELPER: Final = re.compile(
    r"\b(?P<by>with|using|via|through)(?P<space>\s+)(?:the\s+|a\s+|our\s+)?(?:[\w-]+\s+)?(?P<tick>`{0,2})" + _DOTTED
    + r"(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)\s+(?:helper|function|wrapper|class)\b"
    r"(?=\s*(?:[.,;:)]|$))",
    re.IGNORECASE,
)
_HELPER_NAMES: Final = re.compile(r"(?<!\w)(?:" + "|".join(HELPERS) + r")\b")
# "wrapped with multi_gpu_model": the strategy wraps nothing, so that sentence is not renamed
_WRAPPED: Final = re.compile(r"\bwrap\w*\s+$", re.IGNORECASE)
# ... unless it says the model is trained that way ("wraps it in multi_gpu_model", "trained through
# a ModelMGPU wrapper"): the model is trained under the strategy now
_TRAINED: Final = re.compile(
    r"\b(?P<verb>wrap(?:s|ped|ping)?|train(?:s|ed|ing)?)(?P<object>\s+(?:it|them|(?:the|our|this)\s+(?:[\w-]+\s+){0,2}?(?:model|network|net|classifier)))?"
    r"\s+(?P<by>in|into|with|through|via|using|by)\s+(?:an?\s+|the\s+)?(?P<tick>`{0,2})" + _DOTTED
    + r"(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)(?P<noun>\s+(?:wrapper|helper|class|function|call))?"
    r"(?![\w(])",
    re.IGNORECASE,
)
# "It is *not* Keras' `multi_gpu_model`", "unlike keras.utils.multi_gpu_model", "instead of
# make_parallel": the helper named to say what something else is not stays true once it is gone
# (round 50, al12: Mask R-CNN's ParallelModel described against it)
_NAMED_AGAINST: Final = re.compile(
    r"(?:\bis\s+\*{0,2}not\*{0,2}|\bisn[’']t|\bunlike|\binstead\s+of|\brather\s+than|\bnot\s+the"
    # history of a migration: "replaced multi_gpu_model with MirroredStrategy", "(formerly make_parallel)"
    r"|\breplac(?:es|ed|ing)|\bin\s+place\s+of|\bformerly|\bmigrated\s+(?:away\s+)?from"
    r"|\bno\s+longer\s+(?:uses?|calls?|needs?))"
    r"\s+(?:(?:the|keras(?:[’']s?)?)\s+)?[`*]{0,2}" + _DOTTED + r"$",
    re.IGNORECASE,
)
_BY: Final = frozenset({"with", "using", "via"})
# "2 GPUs (`multi_gpu_model`)": the helper named alone in parentheses, as the tool (also where the
# aside gave the version that had it: "(Keras 2.0.9 `training_utils.multi_gpu_model`)")
_ASIDE: Final = re.compile(
    r"\((?i:(?:the\s+)?(?:tf\.)?keras(?:[’']s?)?(?:\s+v?\d+(?:\.\d+)*)?\s+)?"
    r"(?P<tick>`{0,2})" + _DOTTED + r"(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)\)"
)
# "the make_parallel variant" of a script: the strategy's now
_VARIANT: Final = re.compile(
    r"(?P<tick>`{0,2})(?<![\w.])" + _DOTTED + r"(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)"
    # ("the multi_gpu_model replica setup", "the multi_gpu_model path is only used locally", round 53)
    r"(?P<noun>\s+(?:replica\s+)?(?:variant|version|edition|set-?up|path|branch)s?\b)"
    r"(?!\s+(?:that|which)\b)",  # not "... variant that tolerates"
    re.IGNORECASE,
)
# "builds it and wraps it in multi_gpu_model": the strategy replicates it (it does not train it there)
_TRAIN_VERB: Final = {"wrap": "replicate", "wraps": "replicates", "wrapped": "replicated", "wrapping": "replicating"}
_RUN_VERB: Final = {"wrap": "run", "wraps": "runs", "wrapped": "run", "wrapping": "running"}
_INFERENCE: Final = re.compile(r"\bpredict|\binferen|\binfer\b", re.IGNORECASE)
# The helper as the subject of what the strategy does too ("multi_gpu_model splits each batch").
_SUBJECT: Final = re.compile(
    r"(?P<tick>`{0,2})(?<![\w.])" + _DOTTED + r"(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)"
    r"(?P<verb>\s+(?:splits|divides|replicates|copies|distributes|shards|is\s+used|is\s+applied)\b)",
    re.IGNORECASE,
)
# "the model is converted to a parallel model": the old call's doing, not "converted to a model"
_CONVERTED: Final = re.compile(
    r"\b(?:convert|turn|wrap|make|made)\w*\s+(?:\w+\s+){0,3}?(?:in)?to\s+(?:a|the)\s+[*_]{0,2}(?:parallel|multi-?gpu)",
    re.IGNORECASE,
)
# The wrapper's mechanics: true only while a parallel model exists.
MECHANICS: Final = re.compile(
    r"layers\[-2\]|\b(?:parallel|serial|multi[- ]gpu|replicated)[*_]{0,2}[\s_]+(?:`model`|model\b)"
    # "Built under the CPU scope so ...", "(the one built under `/cpu:0`)": the template's placement
    r"|\bcpu\s+scope\b|\b(?:built|created|defined|instantiated)\s+(?:on|under|in)\s+(?:the\s+)?(?:`/cpu:0`|/cpu:0\b)"
    r"|\b(?:data-?parallel|multi-?gpu|parallel|replicated)\s+(?:training\s+)?(?:helper|wrapper|trick|hack)s?\b|\bkuza55\b"
    # "the batch is sliced per GPU and the outputs are concatenated back on the CPU" (round 39, oa08)
    # (not "prediction batches are split per GPU": the strategy splits them too; round 61, bf08)
    r"|\bsliced\s+per\s+(?:gpu|device|tower)\b"
    r"|\b(?:outputs?|results|predictions)\s+(?:are|is|get)\s+(?:merged|concatenated|gathered)\b"
    # "self.model is the replicated network used for fit(); self.model_save shares its weights and
    # is what we store" (round 54, aq13): the old pair's two halves
    r"|\breplicated\s+(?:network|net)\b"
    r"|\bshares?\s+(?:its|their|the)\s+weights\b[^.;]{0,30}\bis\s+what\s+(?:we|you)\s+(?:save|store|checkpoint|export|ship)\b"
    # "Uses the older import path `keras.utils.training_utils`": the helper's module, imported no more
    r"|\b(?:keras|tf\.keras|tensorflow\.keras|tensorflow\.python\.keras)\.utils\.(?:training_utils|multi_gpu_utils)\b"
    # "keras 2.0.9 location of the helper": where the helper was imported from (round 57, aw08)
    r"|\b(?:location|home|module|import\s+path)\s+of\s+the\s+(?:helper|wrapper|multi[- ]?gpu\s+(?:helper|function))\b"
    r"|\bmulti_gpu_utils\b"
    r"|\bcpu_(?:merge|relocation)\b|\b(?:__setattr__|setattr)\s+(?:trick|hack)\b|\b(?:multi-?gpu|parallel)\s+replicas?\b"
    r"|\bshares?\s+(?:its\s+|the\s+|their\s+)?weights\s+with\s+(?:the\s+|its\s+)?(?:parallel|gpu|multi|replica|wrapper|template|towers?)"
    # "with a multi-GPU checkpoint fix", "The template is what we save."
    r"|\bmulti[- ]?gpu\s+checkpoint(?:ing)?\s+(?:fix|workaround|hack)\b|\btemplate\s+is\s+what\s+(?:we|you)\s+save\b"
    # "the weights are shared with `autoencoder`", "build on the CPU and copy the weights to every GPU"
    r"|\bweights\s+(?:are|is|stays?|remains?)\s+shared\s+(?:with|between)\b|\bbuil[dt]\w*\s+(?:it\s+|them\s+)?on\s+(?:the\s+)?cpu\b"
    # "Checkpoints must be taken from the template", "train the replica, but keep checkpointing the
    # template", "so sampling runs on one device": the old pair's two halves and their roles
    r"|\bcheckpoint\w*\s+(?:must\s+|should\s+|have\s+to\s+|are\s+)?(?:be\s+)?(?:taken\s+)?(?:from|of)\s+the\s+template\b"
    r"|\bkeep\w*\s+checkpoint\w*\s+the\s+template\b|\breplicas?\b[^.;]{0,60}\btemplate\b|\btemplate\b[^.;]{0,60}\breplicas?\b"
    r"|\bso\s+(?:that\s+)?[^.;]{0,30}\b(?:runs?|loads?|works?)\s+on\s+(?:one|a\s+single|1)\s+(?:device|gpu)\b"
    # "on the laptop this raises and we just use the CPU model": the old call's fallback
    r"|\b(?:raises|throws|fails)\b[^.;]{0,20}\b(?:we|it|then)\s+(?:just\s+|simply\s+)?(?:use|fall\s+back)\b"
    r"|\bthe\s+cpu\s+model\b"
    # "batch must divide evenly between the towers", "saves through the wrapper", "save the template
    # so the fold model loads anywhere", "Weights are shared, so ...": the old slicing and the pair
    r"|\bdivid\w*\s+evenly\s+(?:between|across|among|over|by)\s+(?:the\s+)?(?:towers|gpus|cards|devices|gpu\s+count"
    r"|number\s+of\s+gpus)\b"
    r"|\bthrough\s+the\s+(?:\w+[- ])?wrapper\b|\btemplate(?:\s+model)?\s+so\s+(?:that\s+)?\w"
    # "a model wrapped the same way", "a multiple of gpu_count or the last tower gets nothing",
    # "wrap for data parallelism": the old wrapper and its slicing
    r"|\bwrapped\s+the\s+same\s+way\b|\blast\s+tower\b|\bwrap\w*\s+for\s+(?:data[- ])?parallel"
    # "compiled again after wrapping it (the wrapper needs its own compile())" (round 49, ai18)
    r"|\b(?:after|before|once)\s+wrapping\b|\bthe\s+wrapper\s+(?:needs|requires|must|has\s+to|gets)\b"
    # "the towers share its weights", "the template ... and the model to train", "on a machine with
    # the same GPU count", "converted to a parallel model": round 36
    r"|\btowers?\s+shar\w*|\btemplate\b[^.;]{0,40}\band\s+the\s+model\s+to\s+(?:train|fit)\b"
    r"|\b(?:machine|box|node|server|host)\s+with\s+the\s+same\s+(?:gpu\s+count|number\s+of\s+gpus)\b"
    # "save the serial one", "the wrapper falls back to the plain model", "the multi-GPU graph is
    # tied to the GPU count": round 37
    r"|\b(?:serial|single[- ](?:gpu|device))\s+one\b|\bthe\s+wrapper\s+falls\s+back\b"
    r"|\bmulti[- ]?gpu\s+graph\b|\btied\s+to\s+the\s+(?:gpu\s+count|number\s+of\s+gpus)\b"
    # "The try/except lets the same notebook run on the laptop": the wrap's fallback, an `if` now
    r"|\btry\s*/\s*except\b[^.;]{0,40}\b(?:laptops?|cpu|without\s+(?:a\s+)?gpus?|single\s+gpu|one\s+gpu|no\s+gpus?)\b"
    r"|\bmultiple\s+of\s+(?:the\s+)?(?:number\s+of\s+(?:gpus|cards|devices)|(?:\w*_)?gpus?(?:_\w*)?\b|gpu\s+count)"
    r"|\bweights\s+(?:are|is|stay|remain)\s+shared\s*(?:[.;]|,\s*so\b|$)"
    r"|\bcop(?:y|ies|ied)\s+(?:the\s+)?weights\s+(?:on)?to\s+(?:every|each|all|both|the)\s+(?:\w+\s+)?gpus?\b"
    # "always persist the single-device copy", "saving the single model is enough": the old pair's half
    r"|\bsingle[- ](?:device|gpu)\s+(?:copy|version|template)s?\b|\bsav\w*\s+(?:the\s+)?(?:single|serial)\s+model\b"
    # "evaluate with the multi-GPU trainer (it shares ...)", "Keras moves the weights to the CPU for
    # us" (`cpu_relocation=True`): the parallel half, the old placement (round 60, bd10, bd18)
    # (not the script's own name for itself: "CIFAR-10 multi-GPU trainer"; round 65, bm01)
    r"|\b(?:the|a|its|our|this)\s+multi[- ]?gpu\s+(?:trainer|copy|twin|clone)\b"
    r"|\bweights\b[^.;]{0,20}\b(?:on)?to\s+the\s+cpu\b"
    # "wrap so that ModelCheckpoint saves the serial weights" (round 60, bc03): the wrapper's reason
    r"|\bserial\s+(?:model(?:'s)?\s+)?weights\b|\bwrap(?:ped|ping)?\s+(?:it\s+|the\s+model\s+)?so\s+(?:that\s+)?\w"
    r"|\btemplate\b[^.;:]{0,30}\bcpu\b"  # "the template lives on the CPU": the old function's placement
    # "because each tower gets exactly half", "the gradients are averaged on the CPU" (round 61, bf17, bf18)
    r"|\beach\s+tower\b|\btowers?\s+(?:gets?|receives?|takes?|sees?|process\w*)\b"
    r"|\b(?:averag|summ|reduc|aggregat|combin|merg|gather)ed\s+(?:back\s+)?on\s+the\s+(?:cpu|host)\b"
    # "The **original** `model` is kept for saving." (round 65, bn15): the pair's other half
    r"|\boriginal[\W_]{0,4}model[\W_]{0,3}is\s+kept\b"
    # "... and the CPU merges the gradients" (round 64, bl01): the old placement, said the other way
    r"|\bthe\s+(?:cpu|host)\s+(?:then\s+)?(?:averages|sums|reduces|aggregates|combines|merges|gathers|concatenates)\b"
    # "so the weights stay in host memory", "Try to replicate the model on 2 GPUs" (the old call's
    # try), "The checkpoint callback must save the **template**" (round 62, bg14, bg19, bf14)
    r"|\b(?:stay|stays|live|lives|sit|sits|remain|remains|kept|stored|held)\s+in\s+(?:the\s+)?host\s+memory\b"
    r"|\btry\s+to\s+(?:replicate|wrap|paralleli[sz]e)\b"
    r"|\b(?:must|should|has\s+to|have\s+to|needs?\s+to)\s+(?:save|checkpoint|store)\s+the\s+[*_]{0,2}template\b[*_]{0,2}"
    r"(?!\s+model)"
    # "`multi_gpu_model(model, G)` returns a new model ...; We compile and fit that one; `model`
    # keeps the shared weights" (round 62, bg18): the old call's second model
    r"|\breturns?\s+(?:a\s+)?(?:new|second|separate|wrapped|parallel)\s+model\b|\bkeeps?\s+the\s+shared\s+weights\b"
    r"|\b(?:compile|fit|train)\w*\b[^.;]{0,20}\bthat\s+one\b"
    # "save it rather than the replica" (round 61, bf10): the other half of the old pair
    r"|\b(?:rather\s+than|instead\s+of|not)\s+the\s+replicas?\b"
    # "We first build the ordinary single-device model", "A model that can still be checkpointed"
    # (round 61, bf11, bf13): the template, set against the wrapper
    r"|\b(?:ordinary|plain|regular|normal|usual)\s+single[- ](?:device|gpu)\s+model\b"
    r"|\bcan\s+still\s+be\s+(?:checkpointed|saved|serialized|serialised|pickled|reloaded)\b"
    # "On one GPU they are the same object", "Instantiate the base model on the default device"
    # (round 62, bh04, bh05): the pair, and a placement the scope decides now
    r"|\b(?:they|both)\s+are\s+the\s+same\s+(?:object|model|instance)\b|\bon\s+the\s+default\s+device\b"
    # "Keeping the template's weights in host memory", "build the U-Net on the CPU (template)", "the
    # two `Lambda` slices", "The model is built normally." (against `cpu_relocation`; round 62: bh11,
    # bh16, bh18, bh20)
    r"|\bweights\s+in\s+(?:the\s+)?host\s+memory\b|\bcpu\b[^.;:]{0,20}\btemplate\b|`Lambda`\s+slic\w*"
    r"|\b(?:built|created|defined|constructed)\s+normally\b"
    # "Returns the parallel model when n_gpus > 1, otherwise the plain one", "Both share weights;
    # compile and fit the second one, save the first one", "the original `lstm` object stays
    # uncompiled, which is fine because we only use it to save the weights" (round 63: bi19, bi06, bj20)
    r"|\botherwise\s+the\s+(?:plain|single|serial|original|base|template|cpu)\s+one\b"
    r"|\bboth\s+share\s+(?:the\s+|their\s+)?weights\b|\b(?:the\s+)?(?:first|second)\s+one\b[^.;]{0,30}\b(?:first|second)\s+one\b"
    r"|\b(?:fit|train|compile|save)\w*\s+the\s+(?:first|second)\s+one\b"
    r"|\bstays?\s+uncompiled\b|\bonly\s+use\s+it\s+to\s+save\b"
    # "its weights are hosted on the CPU", "instantiated under a CPU device scope" (round 41, fa12)
    r"|\b(?:weights|variables|parameters)\s+(?:are|is|live|stay|sit)\s+(?:\w+\s+)?on\s+the\s+(?:cpu|host)\b"
    r"|\bcpu\s+device\s+scope\b"
    # "saves the CPU copy, not the GPU replica" (round 44, ba19): the old pair's two halves
    r"|\bcpu\s+(?:copy|version)\b|\bthe\s+gpu\s+replicas?\b"
    # "we never need the single copy", "sub-linear because of the CPU merge", "the wrapper only
    # exists for speed" (round 52, am11, an10, an19)
    r"|\bthe\s+single\s+copy\b|\bcpu\s+merg(?:e|ing)\b|\bthe\s+wrapper\s+(?:only|just)\s+exists\b"
    # round 45: "the original (non-parallel) model is what we ship", "raises ValueError when fewer
    # than 2 are visible" (the old call's refusal), "reload it with the same number of GPUs"
    r"|\bnon-?parallel\s+model\b|\b(?:original|serial|base)\b[^.;]{0,30}\bis\s+what\s+(?:we|you)\s+"
    r"(?:save|ship|export|checkpoint)"
    r"|\braises?\s+(?:a\s+)?ValueError\b[^.;]{0,30}\b(?:fewer|less|one|single|no|only)\b"
    r"|\bwith\s+the\s+same\s+(?:number\s+of\s+gpus|gpu\s+count)\b"
    # "train a parallel copy" (round 43, db14): the old pair's other half
    r"|\b(?:parallel|multi-?gpu|data-?parallel)\s+(?:cop(?:y|ies)|twins?|clones?)\b"
    # "This file imports the wrapper from utils": the multi-GPU wrapper, gone
    r"|\bimports?\s+the\s+wrapper\b|\bthe\s+wrapper\s+(?:from|class|module)\b"
    # "the wrapper is what we compile and fit" (round 48, ah01): there is none
    r"|\bthe\s+wrapper\s+is\s+(?:what|the\s+one)\b"
    # "(not under tf.device('/cpu:0'))" (round 48, ag11): the old placement, the scope places it now
    r"|\b(?:under|in|inside|within)\s+`?(?:with\s+)?tf\.device\(\s*['\"]/cpu:0['\"]\s*\)"
    # kuza55's towers: "run one tower per GPU and merge the outputs on the CPU"
    r"|\b(?:merg|concat)\w*\s+(?:the\s+|their\s+)?(?:outputs?|results|predictions)\b[^.;]{0,20}\bcpu\b|\btowers?\s+(?:per|on\s+each)\s+gpu\b"
    # "checkpoint the template so the file loads on one GPU", "the training model for fit() and the
    # template for saving": the two models of the old pair, named together
    r"|\btemplate\b[^.;:]{0,80}\b(?:one|single|1)[- ]gpu\b|\bwithout\s+the\s+(?:multi-?gpu\s+|parallel\s+)?wrapper\b"
    r"|\b(?:training|parallel|gpu|multi-?gpu)\s+model\b[^.;]{0,40}\band\s+the\s+template\b"
    r"|\btemplate\b[^.;]{0,40}\band\s+the\s+model\s+used\s+for\s+(?:fit\w*|train\w*)"
    # "returns the template model (for saving) and the model we train" (round 38, lb06)
    r"|\btemplate\b[^.;]{0,40}\band\s+the\s+(?:model|one|net(?:work)?)\s+(?:that\s+)?(?:we|you)\s+(?:train|fit)\b"
    # "the template is the layer just before the merge outputs", "the checkpoint files contain the
    # replicated graph", "export it to get a single-GPU h5" (round 39, oa12)
    r"|\blayer\s+(?:just\s+|right\s+)?before\s+the\s+(?:merg|concat)\w*|\breplicated\s+graph\b"
    # (not "a saved single-GPU checkpoint" resumed on several: the file's history, round 46, ac17)
    # (nor one resumed from: "resume from a single-gpu checkpoint if given", round 57, aw15)
    r"|(?<!saved\s)(?<!existing\s)(?<!previous\s)(?<!pretrained\s)(?<!from\sa\s)(?<!from\s)(?<!from\sthe\s)"
    r"\bsingle[- ]gpu\s+(?:h5|hdf5|file|checkpoint|copy|weights)\b"
    # "only wraps the model when there is more than one" (round 38, lb03): nothing is wrapped now
    r"|\bwraps?\s+the\s+(?:model|network|net)\s+(?:only\s+)?(?:when|if)\b"
    r"|\btemplate\b[^.;]{0,40}\band\s+the\s+(?:training|parallel|gpu|multi-?gpu)\s+model\b"
    # "keeps both the template and the GPU replica": the pair the old function made
    r"|\btemplate\s+and\s+(?:the\s+|its\s+)?(?:gpu|parallel|multi-?gpu)\s+"
    r"(?:replicas?|cop(?:y|ies)|models?|versions?)\b"
    r"|\bre-?wrap\w*|\b(?:template|original|serial)\s+(?:model\s+|`\w+`\s+)?(?:holds|keeps|owns|stores)\s+(?:the\s+|all\s+|its\s+)?"
    r"(?:trained\s+)?weights\b"
    # "Multi-GPU: wrap the VAE", "wrap the model for 4 GPUs": nothing is wrapped under the strategy
    r"|\b(?:build|builds|built|create|creates|created|place|placed|keep|kept)\s+(?:the\s+|our\s+)?(?:[\w-]+\s+){0,2}?"
    # "We build the (landmark) model on the CPU, then replicate it"
    r"(?:model|template|network|net|weights)\s+on\s+(?:the\s+)?cpu\b"
    # "The network is loaded on the CPU and replicated across GPUs"
    r"|\b(?:model|template|network|net|weights)\s+(?:is|are|gets|get)\s+(?:built|loaded|created|placed|kept|"
    r"instantiated)\s+on\s+(?:the\s+)?cpu\b"
    # (not a list: "Wraps model construction, multi-GPU replication and fitting", a class's job, round 46)
    r"|\bmulti-?gpus?\b[^.;]{0,20}\bwrap\w*|\bwrap(?:s|ped|ping)?\b[^.;,]{0,40}\b(?:multi[- ]?gpus?|gpus)\b"
    # "batch must be divisible by GPU_COUNT": the old slicing's limit, not the strategy's
    r"|\bdivisible\s+by\s+(?:the\s+)?(?:number\s+of\s+(?:gpus|cards|devices)|(?:\w*_)?gpus?(?:_\w*)?\b|gpu\s+count)"
    # "train the replicated copy", "its multi-GPU twin", "compile the copy", "save/load calls go to base_model"
    r"|\breplicated\s+cop(?:y|ies)\b|\b(?:multi[- ]?gpu|gpu|parallel)\s+twins?\b|\bcompil\w*\s+the\s+copy\b"
    # "then replicated and compiled again for training": one compile, under the scope
    r"|\breplicated\s+and\s+(?:re-?)?compiled\b|\bcompiled\s+again\s+for\s+training\b"
    r"|\b(?:save|load)(?:\s*/\s*(?:save|load))?\s+calls?\s+(?:go|are\s+sent|are\s+forwarded)\s+to\b"
    # "save the template model, not the parallel one": the other half of the old pair
    r"|\b(?:parallel|multi-?gpu|wrapped|replicated)\s+one\b|\bpossibly\s+(?:parallel|multi-?gpu|replicated|wrapped)\b"
    # "the parallel ones are only used for training", "the serial generator/discriminator"
    # "Always save template_model.", "the template (for saving) and the one to train", "It returns
    # *both* models", "weights shared with base_model" (round 46: ad08, ac11, ad04)
    r"|\b(?:always|only|never)\s+sav\w*\s+(?:the\s+)?[`*]{0,2}template\b|\bsav\w*\s+`?template_model\b|\btemplate\b[^.;]{0,40}\band\s+the\s+one\s+"
    r"(?:to\s+|we\s+|you\s+)?(?:train|fit)\b|\btemplate[*_`]{0,2}\s+(?:\([^()]*\)\s+)?for\s+(?:saving|checkpoint\w*|export\w*)\b|\breturns?\s+[*_]{0,2}both[*_]{0,2}\s+models\b|\bweights\s+shared\s+with\b"
    r"|\bparallel\s+ones\b|\bserial\s+(?:generators?|discriminators?|encoders?|decoders?|networks?|nets?|versions?)\b"
    # "predict() on the replica", "the replica is not loadable", "keep `model` around for saving"
    r"|\bon\s+the\s+replica\b|\b(?:replica|wrapper)\s+(?:is|are)\s+not\b"
    # "keep `unet` for saving", "the template lives at -2" (round 55): the old pair's halves
    r"|\bkeep\w*\s+`\w+`\s+for\s+(?:saving|checkpoint\w*|export\w*)\b|\blives?\s+at\s+(?:index\s+)?-2\b"
    # "the wrapper cannot be reloaded" (round 50, ak13): there is none to reload
    r"|\bthe\s+wrapper\s+(?:cannot|can't|can\s+not|could\s+not|won't|will\s+not|does\s+not|doesn't)\b"
    r"|\bkeep\w*\s+[^.;]{0,20}\baround\s+for\s+(?:sav|checkpoint)"
    # "Keep a handle on `model` for saving", "the batch must be a multiple of NGPUS" (round 40)
    r"|\bkeep\w*\s+(?:a\s+)?(?:handle|reference)\s+(?:on|to)\s+[^.;]{0,20}\bfor\s+(?:sav|checkpoint)"
    r"|\bmultiple\s+of\s+(?:the\s+)?(?:number\s+of\s+(?:gpus|cards|devices)|\w*gpus?\w*|gpu\s+count)\b"
    # "checkpoints still save the base model": still, beside a parallel model that is gone
    r"|\bstill\s+(?:sav|checkpoint|writ)\w*\s+(?:the\s+)?(?:base|template|serial|original|single|cpu|`\w+`)"
    # "fall back to one if the wrap fails": the call that wrapped, gone
    r"|\bthe\s+wrap\b(?!\s+(?:layer|function|helper)s?\b)"
    # "wrap it again (the wrapper itself is not serialisable)", "ModelCheckpoint would save the
    # wrapper", "`save`/`load_weights` are forwarded to the template (see keras issue #2436)": the
    # old wrapper's limits and ModelMGPU's forwarding (rounds 58, az11, az01)
    r"|\bwrap\w*\s+(?:it|them|the\s+model)\s+again\b|\b(?:replica|wrapper)\s+itself\s+(?:is|are)\s+not\b"
    r"|\bwould\s+(?:save|checkpoint|store|seriali[sz]e)\s+the\s+(?:\w+\s+)?(?:wrapper|replica|parallel\s+model)\b"
    r"|\b(?:are|is|get|gets|be|being)\s+forwarded\s+to\s+the\b|\bissues?\s*#?\s*2436\b|/issues/2436\b"
    # "Returns a (template, trainable) pair.": the old pair, returned as one model now (round 58, ay07)
    r"|\(\s*`?(?:template\w*`?\s*,\s*`?\w+|\w+`?\s*,\s*`?template\w*)`?\s*\)\s+(?:pair|tuple)\b"
    # "Return (template, trainable). trainable is the multi-GPU model when gpus > 1." (round 60, bd16)
    r"|\b(?:is|are)\s+the\s+(?:parallel|multi[- ]?gpu)\s+(?:model|copy|version)\s+(?:when|if|whenever|once)\b"
    # "the train model only exists for the multi-GPU fit", "the U-Net and ... its replica"
    r"|\bthe\s+train\s+model\b|\bmulti-?gpu\s+fit\b|\bits\s+(?:gpu\s+|multi-?gpu\s+)?replicas?\b"
    r"|\bmerge\s+layers?\b|\bslicing\s+layers?\b|\bLambda\s+slic\w*|\b(?:data-?parallel|parallel|training|multi-?gpu|gpu)\s+cop(?:y|ies)\b"
    + "|" + _CONVERTED.pattern,
    re.IGNORECASE,
)
_PARALLEL_MODEL: Final = re.compile(
    # (also emphasised: "recompile the *parallel* model")
    # (or a message's object: "compiled multi-GPU model on 2 GPUs")
    r"(?:\b(?P<article>the\s+|our\s+|a\s+)|(?<=\bcompiled\s)|(?<=\bbuilt\s)|(?<=\bcreated\s)|(?<=\btraining\s))"
    # ("compile the multi-GPU version": the other version is gone)
    r"(?P<em>[*_]{0,2})(?:parallel|multi-gpu|multi\s+gpu)(?P=em)\s+(?:model|version)\b",
    re.IGNORECASE,
)
# "otherwise fall back to the single-device model": one device, no second model now (round 61, be05)
_FALLBACK_TO_ONE: Final = re.compile(
    r"\b(?P<verb>fall(?:s|ing)?\s+back\s+to)\s+(?:the|a)\s+(?:plain\s+)?single[- ](?P<device>device|gpu)\s+model\b",
    re.IGNORECASE,
)
_DEFINED_AS_PARALLEL: Final = re.compile(
    r"\b(?:is|are)\s+the\s+(?:parallel|multi[- ]?gpu)\s+(?:model|copy|version)\s+(?:when|if|whenever|once)\b",
    re.IGNORECASE,
)
# "Could not build the multi-GPU model, falling back to one device" (round 59, bb06): what the
# one-device path says: the model was built, not replicated ("Could not replicate the model, ...");
# "Could not build the model" would be false
_NOT_BUILT: Final = re.compile(
    r"\b(?P<failed>(?:could\s*n[o']t|can\s*n[o']t|cannot|unable\s+to|failed\s+to))\s+"
    r"(?P<verb>build|create|make|construct|set\s+up)\s+(?:the\s+|a\s+)?(?:parallel|multi-gpu|multi\s+gpu)\s+model\b",
    re.IGNORECASE,
)
# "compile the *parallel* model, not `ae`": the other half named beside it, no rename makes it true
_CONTRASTED: Final = re.compile(
    r"\bmodel[*_]{0,2}\s*,?\s+(?:not|instead\s+of|rather\s+than)\s+(?:the\s+)?(?:`\w+`|template\b)"
    r"|\b(?:serial|template|single[- ](?:gpu|device)|original)\s+one\b"  # "...; save the serial one"
    # "ignore the parallel model that fit() hands us" (round 62, bh06): it is the model now
    r"|\bignor\w*\s+the\s+(?:parallel|multi[- ]?gpu)\s+model\b",
    re.IGNORECASE,
)
# "Save the template model after each epoch.": one model now, "the model"
_TEMPLATE_MODEL: Final = re.compile(
    # (also an item of a tuple: ":return: (template model, keras History)")
    # (or a message's object: "saved template model")
    r"(?:\b(?P<article>the\s+|our\s+|a\s+)|(?<=\()|(?<=,\s)|(?<=\bsaved\s)|(?<=\bsaving\s)|(?<=\bloaded\s))"
    # (or emphasised: "Save the *template* model")
    # (or described as inside the wrapper: "saves the wrapped template model", round 43, da14)
    r"(?:(?:wrapped\s+|inner\s+|underlying\s+)?"
    r"(?P<em>[*_]{0,2})(?:template|serial|single[- ](?:gpu|device)|inner)(?P=em)\s+model"
    # (a possessive too: "Save the serial model's weights", round 38, la08)
    r"|(?:serial|single[- ](?:gpu|device)|cpu)\s+template(?:\s+model)?)\b(?![-_(`\"]|'(?!s\b)|\.\w)",
    re.IGNORECASE,
)
_SAVE_PURPOSE: Final = re.compile(
    r"(?P<strategy>`?" + re.escape(STRATEGY) + r"`?)\s*,?\s+(?:so(?:\s+that)?|in\s+order\s+to|because)\s+"
    r"[^.;]*\b(?:checkpoint|sav|load|weights)\w*[^.;]*",
    re.IGNORECASE,
)
_SAVING: Final = re.compile(
    r"\b(?:sav(?:e|es|ed|ing)|(?:re)?load\w*|checkpoint\w*)\s+(?:the\s+|our\s+)?(?:parallel|multi-gpu|multi\s+gpu)\s+model"
    r"|\b(?:parallel|multi-gpu|multi\s+gpu)\s+model\s+is\s+(?:what|the\s+one)\s+(?:that\s+)?(?:gets|we|is)\s+"
    r"(?:sav|checkpoint|serialis|serializ)",
    re.IGNORECASE,
)
# "with the reloaded template": the template as the noun, one model now
_TEMPLATE_NOUN: Final = re.compile(
    r"\b(?P<article>the\s+|our\s+)(?P<adjective>(?:saved|reloaded|trained|loaded|underlying|original|restored|"
    r"compiled|same)\s+)?template\b(?!\s*(?:model|file|string|matching|image|path|name|text|html)s?\b|[-_(`'\"]|\.\w)",
    re.IGNORECASE,
)
# "the best template weights": the template's half named on its weights
_TEMPLATE_WEIGHTS: Final = re.compile(r"\btemplate(?:'s)?\s+(?=weights\b)", re.IGNORECASE)
# `model.layers[-2].trainable = True` in commented-out code: a layer of the one model, not the
# wrapper's template (`layers[-2].save(...)`, `.save_weights`, `.get_weights()` are the wrapper's)
_LAYER_OF_MODEL: Final = re.compile(
    r"layers\[-2\](?!\s*\.\s*(?:save|save_weights|get_weights|set_weights|to_json|load_weights)\b)"
)
_TEMPLATE_WEIGHTS_SAID: Final = re.compile(r"\btemplate(?:'s)?\s+weights\b", re.IGNORECASE)
# "the template and the data-parallel model used for fit": the pair, one model now
_SERIAL_HALF: Final = r"(?:template|serial|single[- ](?:gpu|device)|base|original|cpu)(?:\s+model)?"
_PARALLEL_HALF: Final = r"(?:data[- ]parallel|parallel|multi[- ]?gpu|replicated)\s+(?:model|copy)"
_BOTH_HALVES: Final = re.compile(
    rf"(?<!\bboth\s)\b(?P<article>the\s+|our\s+)(?:{_SERIAL_HALF}\s+and\s+(?:the\s+|its\s+)?"
    rf"(?:{_PARALLEL_HALF}|training\s+model)|{_PARALLEL_HALF}\s+and\s+(?:the\s+|its\s+)?{_SERIAL_HALF})\b(?!\s*\()"
    # (not the two as the subject of a plural verb: "the template and the parallel model share
    # weights, so either can be used" is the pair's, round 53, ap02)
    r"(?!\s+(?:share|are|were|have|both|each|either)\b)",
    re.IGNORECASE,
)
# "falls back to a single device when `multi_gpu_model` refuses": the case the strategy takes in stride
_HELPER_REFUSES: Final = re.compile(
    r"\bwhen\s+(?:the\s+)?(?P<tick>`{0,2})(?P<name>" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)(?:\s+call)?\s+"
    r"(?:refuses|fails|raises(?:\s+an?\s+(?:error|exception))?|errors(?:\s+out)?|complains|throws)\b"
    # (with its example of a machine that made it refuse: "(e.g. only one card visible)", said now)
    r"(?:\s*\((?:(?:e\.g\.|i\.e\.|say|like)[,:]?\s+)?[^()]*\b(?:visible|one\s+(?:card|gpu)|single\s+(?:card|gpu)|no\s+gpus?)\b"
    r"[^()]*\))?",
    re.IGNORECASE,
)
# ", following the Keras docs example for multi_gpu_model": where the script came from, the old
# function's documentation (round 56, au07)
_DOCS_EXAMPLE: Final = re.compile(
    r",?\s+(?:following|after|from|based\s+on|adapted\s+from|as\s+in)\s+(?:the\s+)?(?:keras(?:[’']s?)?\s+)?"
    r"(?:docs?|documentation)(?:[’']s?)?\s+(?:example\s+)?(?:for|of|on)\s+(?P<tick>`{0,2})" + _DOTTED
    + r"(?:" + "|".join(HELPERS) + r")(?:\(\))?(?P=tick)",
    re.IGNORECASE,
)
# ", and, if there is more than one GPU, wrap it", "and wraps it for several GPUs" (round 57, aw07)
_WRAP_CLAUSE: Final = re.compile(
    # (not where it names what it wraps with: "wraps it with multi_gpu_model" is renamed)
    r",?\s+and,?\s+(?:(?:if|when)\s+[^,.;]{0,60},\s+)?wraps?\s+it\b(?!\s+(?:with|in|into|using|via|through)\b)(?:\s+(?:if|when|for|on|across)\s+[^,.;]{0,60})?",
    re.IGNORECASE,
)
_NOT_THE_WRAPPER: Final = re.compile(
    r",?\s+(?:and\s+)?not\s+the\s+(?:multi[- ]?gpu\s+|parallel\s+|gpu\s+)?wrapper\b"
    r"(?=\s*(?:[.;:!?)]|$))",
    re.IGNORECASE,
)
# (not in an aside, "(1 = no wrapping)", which goes by its own rule)
_NO_WRAPPING: Final = re.compile(r"\bno\s+wrapping\b(?![^()]*\))", re.IGNORECASE)
_WRAP_FOR: Final = re.compile(
    r"^(?P<lead>[#\s\"']*)Wrap\s+(?P<object>it|the\s+model|the\s+net(?:work)?)\s+(?P<prep>for|on|across|over)\b"
)
# "Build the CNN on the CPU and return a parallel, compiled version." (round 57, aw16): the
# strategy builds it on no CPU and returns no parallel copy; the build and the compile stay true
_BUILT_ON_CPU: Final = re.compile(
    r"\b(?P<build>(?:build|builds|built|create|creates|created)\s+(?:the\s+|our\s+|a\s+)?(?:[\w-]+\s+){0,2}?[\w-]+)"
    r"\s+on\s+(?:the\s+)?cpu\b(?=\s+and\s+return)",
    re.IGNORECASE,
)
# "# Old-school data parallelism (kuza55 style) for the malware CNN." (round 58, ay04): the file's
# only description; the strategy is no old school and no kuza55 style, the data parallelism stays
_KUZA_ASIDE: Final = re.compile(r"\s*\([^()]*\bkuza55\b[^()]*\)", re.IGNORECASE)
_OLD_SCHOOL_PARALLELISM: Final = re.compile(
    r"^(?P<lead>[#\s\"']*)(?:old[- ]school|old[- ]style|legacy|classic)\s+(?P<rest>(?:data[- ])?parallel)",
    re.IGNORECASE,
)
# "split across the GPUs by the wrapper", "wrapped for multi-GPU training", "unfreeze, re-wrap &
# recompile" (round 59, ba01, ba06, ba19): the strategy splits, replicates, and one compile remains
_BY_THE_WRAPPER: Final = re.compile(
    r"(?<=gpus|GPUs|GPUS|ards|ices|icas)\s+by\s+the\s+(?:multi[- ]?gpu\s+|parallel\s+)?wrapper\b", re.IGNORECASE
)
_WRAPPED_FOR_TRAINING: Final = re.compile(
    r"\bwrapped(?=\s+for\s+(?:#\s*)?(?:multi[- ]?gpu|data[- ]parallel)\s+(?:#\s*)?training\b)", re.IGNORECASE
)
_REWRAP_AND: Final = re.compile(r"\bre-?wrap\s*(?:&|and|\+|/)\s*(?=re-?compil)", re.IGNORECASE)
# "* N -> keras.utils.multi_gpu_model(model, gpus=N)" (round 59, ba08): the call in prose, what
# the strategy line does now
_CALL_SAID: Final = re.compile(
    r"(?P<tick>`?)(?:[\w.]+\.)?multi_gpu_model\(\s*\w+\s*,\s*(?:gpus\s*=\s*)?(?P<n>\w+)\s*\)(?P=tick)"
)
_PARALLEL_COMPILED: Final = re.compile(r"\b(?P<article>a|the)\s+parallel,\s+(?=compiled\b)", re.IGNORECASE)
_DEVICE_WORD: Final = re.compile(r"\b(?:gpus?|cards?|devices?)\b", re.IGNORECASE)
_SERIAL_HALF_NAMED: Final = re.compile(
    r"\b(?:serial|template)\b|\bsingle[- ](?:gpu|device)\s+(?:model|net(?:work)?|copy|version)\b", re.IGNORECASE
)
# "`gpus=None`": the old call's keyword for every visible GPU (round 57, aw13)
_GPUS_NONE: Final = re.compile(r"(?P<tick>`?)\bgpus\s*=\s*None\b(?P=tick)")
# "so here `gpus=2` is just to test the code path" (rounds 55 and 58, at15, az15): the old call's
# argument, which no line holds now; the strategy over that many GPUs does
# (not the file's history: "First attempt used `gpus=4` by mistake -- see the commented cell")
_GPUS_COUNT: Final = re.compile(r"`gpus\s*=\s*(?P<n>\d+)`")
_HISTORY: Final = re.compile(
    r"\b(?:used|was|were|had|tried|commented|mistake|attempts?|originally|previous(?:ly)?|earlier|before)\b",
    re.IGNORECASE,
)
# "(data parallel over towers)": the old slicing's towers
_TOWER_ASIDE: Final = re.compile(r"\s*\([^()]*\btowers?\b[^()]*\)", re.IGNORECASE)
# "the parallel model can't be reloaded on one GPU": a limit of the pair, not of the one model
_PARALLEL_LIMIT: Final = re.compile(
    r"\b(?:parallel|multi[- ]?gpu)\s+(?:model|copy|version)\s+(?:can(?:no|')?t|cannot|won't|will\s+not|doesn't"
    r"|does\s+not|isn't|is\s+not)\b",
    re.IGNORECASE,
)
# "...; the template model is what we save", renamed: which half of the pair, one model now
_WHICH_HALF: Final = re.compile(
    r";\s+(?:the|our)\s+model\s+is\s+(?:what|the\s+one)\s+(?:we|you|to)\b[^.;!?\n]*(?P<end>[.!?]?)$",
    re.IGNORECASE,
)
# a trailing comment the rename left as "# the model": it says nothing
_BARE_MODEL: Final = re.compile(r"#\s*(?:(?:the|a|our|this\s+is\s+the)\s+)?model[.!]?\s*", re.IGNORECASE)
_HALF_NAMED: Final = re.compile(
    r"\b(?:the\s+)?single[- ](?:gpu|device)\s+(?=`\w+`)", re.IGNORECASE
)
_COMPARED: Final = re.compile(r"\b(?:faster|quicker|slower|cheaper|more\s+memory)\b", re.IGNORECASE)
_BY_HAND: Final = re.compile(r",?\s+(?:by\s+hand|manually)\b(?=[\s.,;:)!?]|$)", re.IGNORECASE)
_HELPER_ASIDE: Final = re.compile(r"\s*\([^()]*\b(?:" + "|".join(HELPERS) + r")\b[^()]*\)")
# "`tf.distribute.MirroredStrategy` from our utils notebook": the helper's home, not the strategy's
_STRATEGY_FROM: Final = re.compile(
    r"(?P<strategy>" + re.escape(STRATEGY) + r"`{0,2})\s+from\s+(?:our|the|my)\s+(?:[\w-]+\s+){0,2}"
    r"(?:notebook|module|file|package|script|repo(?:sitory)?|folder)\b"
    # ("`make_parallel` from our utils": round 56, av17)
    r"|(?P<home>" + re.escape(STRATEGY) + r"`{0,2})\s+from\s+(?:our|my)\s+(?:utils?|utilities|helpers?|lib(?:rary)?)\b",
    re.IGNORECASE,
)
# "on 2 GPUs (positional arg below)", "(`gpus=` argument)": the old call's argument, which the
# strategy line does not take (round 56, au18)
_CALL_ARGUMENT_ASIDE: Final = re.compile(
    r"\s*\([^()]*(?:\b(?:positional|keyword)\s+arg(?:ument)?s?\b|`gpus=?`\s+(?:arg(?:ument)?|param(?:eter)?)s?\b"
    r"|`gpus=`)[^()]*\)",
    re.IGNORECASE,
)
# "splits each batch into `gpus` sub-batches": the old argument's count, one per replica now (round 55, at10)
_GPUS_PARTS: Final = re.compile(r"`gpus`(?=\s+(?:sub-?batch|part|slice|piece|chunk)(?:es|s)?\b)")
# a printed message's "saved template" and "(template)": the template named alone
_SAVED_TEMPLATE: Final = re.compile(
    r"(?<=\bsaved\s)template\b(?=\s*(?:[.!:]|$)|\s+(?:to|as|in|at|into)\s)", re.IGNORECASE
)
_TEMPLATE_ASIDE: Final = re.compile(r"\s+\((?:the\s+)?(?:template|serial|single[- ](?:gpu|device))\)", re.IGNORECASE)
# "the model and the model used for fitting": two halves renamed into one name
_DOUBLED: Final = re.compile(
    r"\b(?:the|a|our)\s+model\s+(?:\([^()]*\)\s+)?(?:and|or)\s+(?:the\s+|a\s+)?model\b", re.IGNORECASE
)
# "helper that returns serial and parallel models": the one model now
_BOTH_PLURAL: Final = re.compile(
    r"\b(?:both\s+)?(?:the\s+)?(?:serial|template|single[- ](?:gpu|device)|cpu)\s+and\s+(?:the\s+)?"
    r"(?:parallel|multi[- ]?gpu|data[- ]parallel)\s+models\b",
    re.IGNORECASE,
)
# "Owns the model and the (optional) multi-GPU replica" (round 54, aq13): the one model now
_AND_ITS_COPY: Final = re.compile(
    r"(?P<half>\b(?:model|network|net)\b)\s+and\s+(?:the|its|their)\s+(?:\([^()]*\)\s+)?"
    r"(?:multi[- ]?gpu|parallel|data[- ]parallel|gpu|replicated)\s+"
    r"(?:replicas?|cop(?:y|ies)|wrappers?|versions?|twins?)\b",
    re.IGNORECASE,
)
# "check that the file loads without the GPU wrapper": there is no wrapper to do without
_WITHOUT_WRAPPER: Final = re.compile(
    r"\s+without\s+(?:the|a|any)\s+(?:multi[- ]?gpu\s+|gpu\s+|parallel\s+)?wrapper\b", re.IGNORECASE
)
# "unfreeze ... and recompile the replica": the one model now
_REPLICA_OBJECT: Final = re.compile(
    r"\b(?P<verb>(?:re)?compil\w*|fit\w*|train\w*|sav\w*|evaluat\w*)\s+the\s+(?:replica|replicated\s+model)\b"
    r"(?!s|\s+(?:on|of|per)\b)",
    re.IGNORECASE,
)
_SHARING: Final = re.compile(r"\bshar(?:e|es|ed|ing)\b", re.IGNORECASE)
# "... for saving", "... instead": why one half of the pair was used
_PURPOSE: Final = re.compile(r"\b(?:for|so|because|since|instead|rather)\b", re.IGNORECASE)
_ANOTHER_MODEL: Final = re.compile(
    # ("Train in parallel, predict with the template": how it trains, no second model; round 59, bb10)
    r"models?\b|\bshar(?:e|es|ed|ing)\b|(?<!\bin\s)\bparallel|\bgpu|\breplica|\bwrap", re.IGNORECASE
)
# "the template model is compiled too so that ...": "too" was the parallel model's compile, gone
_AS_WELL: Final = re.compile(r"\s+(?:too|as\s+well)\b(?=\s*(?:[,.;:)]|$|(?:so|because|since|for)\b))",
                             re.IGNORECASE)
# "trained with a multi-GPU wrapper": trained under the strategy now
_THROUGH_WRAPPER: Final = re.compile(
    r"\b(?P<verb>train(?:s|ed|ing)?|run(?:s|ning)?|ran|fit(?:s|ted|ting)?)\s+(?:with|through|via|using|in)\s+"
    r"(?:a|an|the|our)\s+(?:multi-?gpu|data-?parallel|parallel)\s+(?:wrapper|helper)\b",
    re.IGNORECASE,
)
# "inference also goes through the parallel model (splits the batch)": it runs under the strategy
# now ("goes through the model" would say nothing; round 54, aq19)
_THROUGH_PARALLEL_MODEL: Final = re.compile(
    r"\b(?P<verb>go|goes|went|going|run|runs|ran|running)\s+through\s+the\s+"
    r"(?:parallel|multi[- ]?gpu|data[- ]parallel)\s+model\b",
    re.IGNORECASE,
)
_RUNS: Final = {"go": "run", "goes": "runs", "went": "ran", "going": "running"}
# what still speaks of the pair once "the template model" is "the model"
# ("in parallel" is how the strategy trains: round 59, bb10)
_OTHER_HALF: Final = re.compile(
    # (not "data-parallel over every GPU": the strategy's kind of parallelism, round 62, bh03)
    r"\btemplate|\bwrap|(?<!\bin\s)(?<!data-)(?<!data\s)\bparallel\b|\bserial\b|\breplicas?\b|\bcop(?:y|ies)\b|\bcpu\b",
    re.IGNORECASE,
)
# "(the single-GPU model)" after a name: the half of the old pair it is no longer told apart from
_PAIR_ASIDE: Final = re.compile(
    r"\s*\((?:not\s+)?(?:the\s+)?(?:single[- ](?:gpu|device)|serial|template|multi[- ]?gpu|parallel)\s+"
    r"(?:model|one|wrapper|copy)\)"
    # "model used for training (may be multi-gpu)"
    r"|\s*\((?:may\s+be|maybe|possibly|if)\s+(?:multi[- ]?gpu|parallel|wrapped)\)"
    # "saves the template (the one built under `/cpu:0`)": where the template was placed (round 53, ap11)
    r"|\s*\((?:the\s+one\s+|which\s+is\s+|that\s+is\s+)?(?:built|created|defined|instantiated)\s+"
    r"(?:on|under|in)\s+(?:the\s+)?(?:`/cpu:0`|/cpu:0|cpu)\)"
    # "number of GPUs (1 = no wrapping)": one device is a strategy of one replica now;
    # "(>=2)": the old call's refusal of one GPU (round 46, ad15)
    r"|\s*\((?:1|one)\s*(?:=|:|means|->)\s*no\s+(?:wrapping|wrapper|replication|parallel(?:ism)?|multi[- ]?gpu)\)"
    r"|\s*\(\s*(?:>=?\s*2|at\s+least\s+(?:2|two)|min(?:imum)?\.?\s*2)\s*\)"
    # "the (parallel) model", "the *template* (single-device) model" (round 58, ay11)
    r"|(?<=[\w*_])\s+\((?:parallel|multi[- ]?gpu|possibly\s+parallel|single[- ](?:gpu|device)|serial|template)\)"
    r"(?=\s+(?:model|network|net)\b)"
    # "(recompiling the template has no effect on it)": an aside on the template, one model now
    r"|\s*\([^()]*\bthe\s+template\b(?![._-]\w)[^()]*\)"
    # "uses the template model (same weights)": the same as nothing now
    r"|\s*\((?:the\s+)?same\s+weights\)"
    # "Save model weights (template model when running multi-GPU)": which half, when; one model now
    r"|\s*\([^()]*\bwhen\s+(?:running|training|using)\s+(?:on\s+)?(?:multi[- ]?gpus?|several\s+gpus|multiple\s+gpus|"
    r"more\s+than\s+one\s+gpu)\b[^()]*\)",
    re.IGNORECASE,
)
# "the parallel model splits every batch between the GPUs": what the strategy does now
_PARALLEL_SUBJECT: Final = re.compile(
    r"\b(?P<article>the|our)\s+(?:parallel|multi-gpu|multi\s+gpu)\s+model(?P<verb>\s+(?:splits|divides|replicates|"
    r"copies|distributes|shards)\b)",
    re.IGNORECASE,
)
# "# template model": a label for the half of the old pair the line built
_PAIR_LABEL: Final = re.compile(
    # (with an aside on where its weights are: "# template model (weights live here)", round 46, ad13)
    r"^[#\s]*(?:the\s+)?(?:template|serial|single[- ]?(?:gpu|device))(?:\s+model)?"
    r"(?:\s*\((?:weights|variables)\s[^()]*\))?\s*[.:]?\s*$",
    re.IGNORECASE,
)
_ON_PARALLEL_MODEL: Final = re.compile(
    r"\b(?P<verb>run|runs|ran|running|train|trains|trained|training|fit|fits|fitting)\s+on\s+the\s+"
    r"(?:parallel|multi-gpu|multi\s+gpu)\s+model\b",
    re.IGNORECASE,
)
_PAIR: Final = re.compile(
    # ("weights" in a file name, `churn.weights.h5`, is no word of the pair's)
    r"\btemplate|\bserial\b|\bsingle\b|\bwrap|(?<!class )(?<!\.)\bweights\b(?!\.\w)|\blayers\[|\bmerge"
    r"|\breplicas?\b|\bcopy\b|\bcpu\b|\boriginal\b|\bbase model\b|\binner\b",
    re.IGNORECASE,
)
_TEMPLATE: Final = re.compile(r"\btemplate\b", re.IGNORECASE)
# "with `NUM_GPUS` replicas", "4 replicas": a count of the strategy's replicas too, not the old
# pair's replica (round 61, be19)
_COUNTED_REPLICAS: Final = re.compile(
    r"(?:\b\d+|`\w+`|\b[A-Z][A-Z0-9_]+\b|\b(?:two|three|four|six|eight|n|several|multiple))\s+replicas\b"
)
_SENTENCE_KEEP: Final = re.compile(r"(?<=[.!?;])(\s+)")  # split keeping the separators
# `#`, `# ----`, an exported markdown heading (`# # Title`, `# ## Data`): never part of a sentence
_SEPARATOR: Final = re.compile(r"^#\s*(?:[-=*#_~]*\s*$|#+\s)")
_FULL_STOP: Final = re.compile(r"(?<=[.!?])(\s+)")
_SENTENCE_END: Final = re.compile(r"(?<![ (]e\.g\.)(?<![ (]i\.e\.)(?<=[.!?;])\s+")  # not at "e.g." or "i.e."
# never touched: interpreter lines, encoding cookies, tool pragmas
_PRAGMA: Final = re.compile(
    r"^#!|coding[:=]|#\s*(?:type:|noqa|pylint|fmt:|isort:|mypy:|pragma)|^# Dropped `"  # (notes older versions wrote)
    r"|^#\s*In\[[\d ]*\]:|^#\s*%%|^#\s*<(?:codecell|markdowncell)>"  # notebook exports' cell markers
)


def _wrapped(code: str) -> dict[str, str]:
    """`parallel = multi_gpu_model(model, ...)` (or a copied helper): {"parallel": "model"}."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and node.value.args and isinstance(node.value.args[0], ast.Name)):
            continue
        func = node.value.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called in HELPERS:
            found[node.targets[0].id] = node.value.args[0].id
    return found


def bound_names(code: str) -> set[str]:
    """The identifiers `code` reads or binds (names, attributes, definitions, imports)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
            names.add(node.name.split(".")[-1])
    return names


def helpers_left(code: str, text: str) -> frozenset[str]:
    """The helpers `text` names that a migrated `code` (it builds a `MirroredStrategy`) no longer
    binds: what a second run reports again (MGPU305) in a file's comments or a notebook's markdown."""
    if re.search(r"\bdistribute\.(?:MultiWorker)?MirroredStrategy\(", code) is None:
        return frozenset()
    named = {n for n in HELPERS if re.search(rf"(?<!\w){n}\b", text)}
    return frozenset(named - bound_names(code))


@dataclass
class Prose:
    """What counts as stale in one file: the names its rewrite removed, and whether the wrapper's
    mechanics are gone too (every site rewritten)."""

    removed: frozenset[str]
    mechanics_gone: bool
    # a removed parallel model's name -> its template's (`gpu_model = multi_gpu_model(model, ...)`)
    parallel_names: Mapping[str, str] = field(default_factory=dict)
    # removed names that read as words in prose (`parallel`, `template`): removed only as code, in backquotes
    quoted: frozenset[str] = frozenset()
    _pattern: re.Pattern[str] | None = field(init=False, default=None)

    @classmethod
    def between(cls, old: str, new: str, *, mechanics_gone: bool, elsewhere: str = "") -> Prose:
        """`old` and `new`: the code before and after; `elsewhere`: the file's other text (a
        notebook's markdown), where a helper named only in prose is the removed helper too."""
        # only names that read as identifiers in prose: the helpers, or names with an underscore
        # (`gpu_model`, `parallel_model`), not `G` or `model`
        gone = bound_names(old) - bound_names(new)
        removed = {n for n in gone if n in HELPERS or ("_" in n.strip("_") and len(n) > 4)}
        if mechanics_gone:  # "Keras 2.0.x did not have multi_gpu_model yet." over make_parallel (round 46, ac05)
            removed |= {n for n in HELPERS if re.search(rf"\b{n}\b", old + elsewhere) and n not in bound_names(new)}
        parallel = {p: t for p, t in _wrapped(old).items() if p in removed and t in bound_names(new)}
        quoted = {n for n in gone - removed if len(n) > 2 and n.isidentifier()}
        return cls(frozenset(removed), mechanics_gone, parallel, frozenset(quoted))

    def __post_init__(self) -> None:
        parts = [rf"(?<!\w){re.escape(n)}\b" for n in sorted(self.removed, key=len, reverse=True)]
        parts += [rf"`{re.escape(n)}`" for n in sorted(self.quoted, key=len, reverse=True)]  # "Train `parallel`"
        if self.mechanics_gone:
            parts.append(MECHANICS.pattern)
        self._pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def renamed(self, text: str, *, markdown: bool = False) -> str:
        """`text` with a removed helper named as the tool ("with make_parallel") made the strategy;
        commented-out code (`# parallel_model.fit(X, Y)`) is no prose: it stays as written (and
        goes where it names what was removed). `markdown`: a line of a markdown cell, which the
        notebook wraps, so no width holds it."""
        if text.startswith("#") and _commented_code(text) and not markdown:
            return text
        if "\r" in text:  # CRLF lines keep their ends; mixed ones are left as they are
            if text.count("\r") != text.count("\r\n") or text.count("\n") != text.count("\r\n"):
                return text
            return self.renamed(text.replace("\r\n", "\n"), markdown=markdown).replace("\n", "\r\n")
        def swap(match: re.Match[str]) -> str:
            if match["name"] not in self.removed or _WRAPPED.search(match.string[:match.start()]):
                return match[0]
            return f"{match['by']}{match['space']}{match['tick']}{STRATEGY}{match['tick']}"
        def named(form: str) -> Callable[[re.Match[str]], str]:
            """`form` ({strategy} and the match's groups) where the match names a removed helper."""
            def swap_name(match: re.Match[str]) -> str:
                if match["name"] not in self.removed:
                    return match[0]
                groups = {k: v or "" for k, v in match.groupdict().items()}
                return form.format(strategy=f"{match['tick']}{STRATEGY}{match['tick']}", **groups)
            return swap_name
        def trained(match: re.Match[str]) -> str:
            if match["name"] not in self.removed:
                return match[0]
            if match["verb"].lower().startswith("train") and match["by"].lower() in _BY and not match["noun"]:
                return match[0]  # "trained with multi_gpu_model": the tool, renamed as such below
            # (a model wrapped to predict is run, not trained: "... so predict() splits the windows")
            verbs = _RUN_VERB if _INFERENCE.search(match.string) else _TRAIN_VERB
            verb = verbs.get(match["verb"].lower(), match["verb"].lower())
            verb = verb.capitalize() if match["verb"][0].isupper() else verb
            by = "with" if verb.lower().startswith("replicat") else "under"
            return f"{verb}{match['object'] or ''} {by} {match['tick']}{STRATEGY}{match['tick']}"
        def sentence(part: str, full: str) -> str:
            original = part
            if self.mechanics_gone:
                part = _DOCS_EXAMPLE.sub("", part)  # ("Xception on 4 GPUs, following the Keras docs example for ...")
                part = _HALF_NAMED.sub("", part)  # ("Save the single-GPU `model`": one `model`; round 62, bh17)
                if _KUZA_ASIDE.search(part) and _OLD_SCHOOL_PARALLELISM.search(part):
                    part = _OLD_SCHOOL_PARALLELISM.sub(
                        lambda m: m["lead"] + m["rest"][0].upper() + m["rest"][1:], _KUZA_ASIDE.sub("", part)
                    )
                part = _REWRAP_AND.sub("", _WRAPPED_FOR_TRAINING.sub("replicated", _BY_THE_WRAPPER.sub("", part)))
                plain = _PARALLEL_COMPILED.sub(r"\g<article> ", _BUILT_ON_CPU.sub(r"\g<build>", part))
                if plain != part and not MECHANICS.search(plain) and not _OTHER_HALF.search(plain):
                    part = plain  # ("Build the CNN and return a compiled version.")
                # "Build the MLP and, if we have more than one GPU, wrap it.": nothing is wrapped now
                part = _WRAP_CLAUSE.sub(lambda m: "" if _DEVICE_WORD.search(m[0]) else m[0], part)
                # "save the single-device model, not the wrapper"; "0 or 1 means no wrapping"; "Wrap it
                # for the two V100s:" (round 57, ax08, ax15): no wrapper now; the strategy replicates
                if not _TEMPLATE.search(part):  # ("save the template, not the wrapper": the pair's rule)
                    part = _NOT_THE_WRAPPER.sub("", part)
                part = _NO_WRAPPING.sub("a single device", part)
                part = _WRAP_FOR.sub(
                    lambda m: f"{m['lead']}Replicate {m['object']} {'on' if m['prep'] == 'for' else m['prep']}", part
                )
                if "multi_gpu_model" in self.removed:
                    # "gpus=None -> use all GPUs visible to TF": the strategy's argument-less form now
                    part = _GPUS_NONE.sub(lambda m: f"{m['tick']}{STRATEGY}(){m['tick']}", part)
                    if not _HISTORY.search(part) and "multi-gpu-codemod" not in part:  # (not the codemod's own notes)
                        part = _CALL_SAID.sub(lambda m: f"{m['tick']}{STRATEGY}{m['tick']} over {m['n']} GPUs", part)
                        part = _GPUS_COUNT.sub(lambda m: f"{_article(m)} {m['n']}-GPU strategy", part)
                part = _BOTH_HALVES.sub(r"\g<article>model", part)
                part = _BOTH_PLURAL.sub("the model", part)
                part = _AND_ITS_COPY.sub(r"\g<half>", part)
                part = _THROUGH_WRAPPER.sub(rf"\g<verb> under {STRATEGY}", part)
                part = _THROUGH_PARALLEL_MODEL.sub(
                    lambda m: f"{_RUNS.get(m['verb'].lower(), m['verb'].lower())} under {STRATEGY}", part
                )
                part = _PAIR_ASIDE.sub("", part)
                if not _TEMPLATE.search(part):  # ("save the template, train the replica": the pair, stale)
                    part = _REPLICA_OBJECT.sub(r"\g<verb> the model", part)  # "recompile the replica"
            # (an aside on the pair goes by its own rule: "(ModelCheckpoint would save the wrapper)")
            said = re.sub(r"\([^()]*\)", "", part)
            if self.mechanics_gone and _TEMPLATE_WEIGHTS.search(said) and not MECHANICS.search(said):
                # "keeps the best template weights": the weights, of the one model
                part = part if _OTHER_HALF.search(_TRAINED.sub("", _TEMPLATE_WEIGHTS.sub("", said))) else (
                    _TEMPLATE_WEIGHTS.sub("", part)
                )
            if self.mechanics_gone:  # "otherwise fall back to the single-device model" (round 61)
                part = _FALLBACK_TO_ONE.sub(r"\g<verb> a single \g<device>", part)
            alone = part
            if self.mechanics_gone and _TEMPLATE_MODEL.search(part) and not MECHANICS.search(part):
                alone = _AS_WELL.sub("", _TEMPLATE_MODEL.sub(r"\g<article>model", part))
            elif (
                self.mechanics_gone and _TEMPLATE_NOUN.search(part) and not MECHANICS.search(part)
                # not where the text names another model ("returns the template and the model to
                # train", "Returns (template_model, training_model)") or is a bare label ("# the template")
                and not _ANOTHER_MODEL.search(text) and len(_TEMPLATE_NOUN.sub("", part).split()) >= 2
            ):
                alone = _AS_WELL.sub("", _TEMPLATE_NOUN.sub(r"\g<article>\g<adjective>model", part))
            if alone is not part:
                part = part if _OTHER_HALF.search(_TRAINED.sub("", alone)) else alone
            if _PAIR.search(_COUNTED_REPLICAS.sub("", _VARIANT.sub("", _TRAINED.sub("", _TOOL_HELPER.sub(
                "", _WITHOUT_WRAPPER.sub("", _helper_clause(part))
            ))))):
                # it says more about the old pair (template, copy, CPU): not made true by a name
                # ("the ModelMGPU wrapper" ending a clause is the tool's name: renamed below)
                return part
            if _OLD_WAY.search(part) and _HELPER_NAMES.search(part):
                # "# Old-school data parallelism (`make_parallel`)": renamed, the strategy would be
                # the old way (round 48, ah06); left to the staleness rules
                return part
            if _STILL_USED.search(part):
                # "We still use multi_gpu_model here because the image is pinned to TF 2.1": why the
                # helper was kept, false of the strategy (round 44, ba15)
                return part
            if self.mechanics_gone:
                part = _WITHOUT_WRAPPER.sub("", part)  # ("loads without the GPU wrapper": there is none)
            part = _TRAINED.sub(trained, part)
            part = _SUBJECT.sub(named("{strategy}{verb}"), _TOOL.sub(swap, _TOOL_HELPER.sub(swap, part)))
            part = _ASIDE.sub(named("({strategy})"), _VARIANT.sub(named("{strategy}{noun}"), part))
            if STRATEGY in part and self.mechanics_gone:
                # "Uses `make_parallel` (data parallel over towers) from our utils notebook": the
                # strategy has no towers and comes from TensorFlow
                part = _STRATEGY_FROM.sub(lambda m: m["strategy"] or m["home"], _TOWER_ASIDE.sub("", part))
                part = _GPUS_PARTS.sub("per-replica", _CALL_ARGUMENT_ASIDE.sub("", part))
                # "splits every batch by hand (written before Keras shipped `multi_gpu_model`)": the
                # helper's ways and history, not the strategy's (round 38, lb04)
                part = _HELPER_ASIDE.sub("", _BY_HAND.sub("", part))
            # "trained with ModelMGPU so that checkpoints can be saved": the wrapper's reason, not the strategy's
            part = _SAVE_PURPOSE.sub(r"\g<strategy>", part)
            # "train the parallel model": one model now, "the model"; not where a clause of the
            # sentence names the other half ("save the template; the parallel model cannot ...")
            # (not where it shares something with another model: "the parallel model shares the
            # layers with `model`" is the pair, not made true by a name)
            unpaired = _PAIR_ASIDE.sub("", full)  # ("(recompiling the template has no effect)" goes)
            if self.mechanics_gone and not (
                _TEMPLATE.search(unpaired) or _SHARING.search(full) or _CONTRASTED.search(full)
                or _CONVERTED.search(full)
                # ("attached to the multi-GPU model, so the files contain the replicated graph": the
                # sentence is the pair's; renamed, its first clause would stay as a half truth)
                or MECHANICS.search(_PARALLEL_MODEL.sub("", full))
                # ("evaluate with the parallel model, it is faster": faster than the other half)
                or _COMPARED.search(full)
                # ("trainable is the multi-GPU model when gpus > 1": what a name of the pair was, round 60)
                or _DEFINED_AS_PARALLEL.search(full)
                # ("the parallel model can't be reloaded on one GPU": the pair's limit, not the model's;
                # round 64, bl09)
                or _PARALLEL_LIMIT.search(full)
            ):
                part = _PARALLEL_SUBJECT.sub(lambda m: f"{STRATEGY}{m['verb']}", part)
                # "run on the parallel model (4 GPUs)": on the strategy's replicas now
                part = _ON_PARALLEL_MODEL.sub(rf"\g<verb> under {STRATEGY}", part)
                part = _NOT_BUILT.sub(r"\g<failed> replicate the model", part)
                if not _SAVING.search(part):  # ("we save the parallel model directly": the pair's problem)
                    part = _PARALLEL_MODEL.sub(r"\g<article>model", part)
            if _DOUBLED.search(part) and not _DOUBLED.search(full):
                # "both the template model and the model used for fitting" would read "both the model
                # and the model ...": the sentence speaks of two models, one now; left to the pair rules
                return original
            for parallel, template in self.parallel_names.items():  # "recompile `gpu_model`" -> `model`
                # not where the sentence names the pair ("returns (model, gpu_model)"; in any of its
                # clauses) or the helper
                pair = re.search(rf"(?<![\w.]){re.escape(template)}\b", full) or _HELPER_NAMES.search(part)
                # nor where it says more of the mechanics ("would store the Lambda slicing layers")
                # nor where it is what something is not ("model.save(...)  # not gpu_model" would
                # read "# not model", round 53, ap20): the contrast went with the pair
                contrast = re.search(rf"\b(?:not|never|instead\s+of|rather\s+than|unlike)\s+`?{re.escape(parallel)}\b",
                                     part, re.IGNORECASE)
                # nor where it weighs it against the template ("predictions come from `gpu_model`
                # too, since it's faster": round 62, bg20)
                compared = re.search(rf"(?<![\w.]){re.escape(parallel)}\b", part) and _COMPARED.search(full)
                if not pair and not contrast and not compared and not (self.mechanics_gone and MECHANICS.search(part)):
                    part = re.sub(rf"(?<![\w.]){re.escape(parallel)}\b", template, part)
            return part
        if self.mechanics_gone:  # ("when `multi_gpu_model` refuses": before the pair's words are read)
            text = _HELPER_REFUSES.sub(
                lambda m: "when at most one GPU is visible" if m["name"] in self.removed else m[0], text
            )
        def whole(full: str) -> str:
            # "The template lives on the CPU; multi_gpu_model copies it to each GPU.": a clause of a
            # sentence about the old pair is no more made true by a name than the sentence is
            # ("the multi_gpu_model replica setup": the strategy's replicas, named as its variant)
            said = _VARIANT.sub("", _TRAINED.sub("", _TOOL_HELPER.sub("", _helper_clause(full))))
            head, semicolon, tail = full.rpartition("; ")
            if (
                self.mechanics_gone and semicolon and "\n" not in full and _HELPER_NAMES.search(head)
                and not _PAIR.search(head) and not MECHANICS.search(head) and MECHANICS.search(tail)
                and full.rstrip()[-1:] == "."
            ):
                # "We train on 2 GPUs using `multi_gpu_model`; the template model stays on the CPU.":
                # the clause on the old placement goes, the tool named before it is renamed (round 59, bb01)
                return whole(head.rstrip(" ,") + ".")
            if _PAIR.search(_COUNTED_REPLICAS.sub("", said)) and _HELPER_NAMES.search(full):
                return full
            return "".join(
                sentence(part, full) if k % 2 == 0 else part for k, part in enumerate(_SENTENCE_KEEP.split(full))
            )
        out = "".join(whole(part) if k % 2 == 0 else part for k, part in enumerate(_FULL_STOP.split(text)))
        if out != text:  # "Keras' `multi_gpu_model` splits ...": the strategy is TensorFlow's (round 48, ah01)
            out = _KERAS_OWNED.sub("", out)
            # "...; the template model is what we save." renamed would say "the model is what we save":
            # which half of the pair, and there is one model now (round 64, bk02)
            out = _WHICH_HALF.sub(lambda m: m[0] if m[0] in text else m["end"], out)
            # "We use keras.utils.training_utils.multi_gpu_model (Keras 2.0.9).": the helper's
            # version, not the strategy's (round 59, bb04)
            out = _VERSION_ASIDE.sub(r"\g<name>", out)
        # in text wrapped within 100 columns, a line the longer name would push past them stays as it
        # was (stale: dropped or reported); unwrapped text (a markdown paragraph on one line) has no width
        if markdown or max((len(line) for line in text.splitlines()), default=0) > 100:
            return out
        if text.startswith("#"):
            # a comment line stays as it was where the rename would push it past 100 columns
            return out if all(len(line) <= 100 for line in out.splitlines()) else text
        # a docstring's paragraph a line of which grew past 100 columns, or past 79 and its own
        # widest line, is wrapped again within that widest line
        return _rewrapped(text, out)

    def names_gone_variable(self, text: str) -> bool:
        """`text` names a variable the migration removed that no rename stands for (`org_model`,
        the template's old name; not `gpu_model`, which becomes the template's)."""
        return any(
            re.search(rf"(?<![\w.]){re.escape(n)}\b", text)
            for n in self.removed if n not in HELPERS and n not in self.parallel_names
        )

    def names_gone_identifier(self, text: str) -> bool:
        """`text` names a removed helper or variable (`make_parallel`), not only the wrapper's
        mechanics ("the replicated model", still true of the strategy's replicas)."""
        return any(re.search(rf"(?<!\w){re.escape(n)}\b", text) for n in self.removed)

    def names_removed(self, text: str) -> str | None:
        """The first removed thing `text` names, or None."""
        if self._pattern is None:
            return None
        for found in self._pattern.finditer(text):
            if not (found[0] in HELPERS and _NAMED_AGAINST.search(text, 0, found.start())):
                return found[0]
        return None

    def without_stale_sentences(self, text: str) -> str:
        """`text` less its sentences that name something removed, when at least one does not and each
        ends where it should (`# Train for ten epochs. The batch is split over gpu_model.`)."""
        parts = _FULL_STOP.split(text)  # sentence, separator, sentence, ...
        sentences = parts[0::2]
        stale = [bool(self.names_removed(s)) for s in sentences]
        if len(sentences) == 1 and "\n" not in text and "; " in text:
            # "# parallelise if we can; multi_gpu_model raises ValueError with < 2 GPUs": the clause
            # after the last `;` goes when it alone names what was removed
            head, _, tail = text.rpartition("; ")
            # (not "base and model share weights; the single-device copy is the one to keep": the
            # first clause is the pair's too, round 60, bc11)
            pair = self.mechanics_gone and _SHARING.search(head)
            if self.names_removed(tail) and not self.names_removed(head) and head.strip("# ") and not pair:
                # (ending as the comment did: "...; falls back if the wrap fails." keeps its full stop)
                return head.rstrip() + (text.rstrip()[-1] if text.rstrip()[-1:] in (".", "!", "?") else "")
            prefix = text[: len(text) - len(text.lstrip("# "))]
            body = text[len(prefix):]
            clause = _clause_kept(body, self) if self.names_removed(head) and not self.names_removed(tail) else ""
            if re.search(r"\bthen\b|^\W*(?:and|but|so|which)\b", tail, re.IGNORECASE) or _POINTS_BACK.search(tail):
                # ("...; the script then saves `model`", "...; we replicate over all of them": after
                # what went, round 49, aj16)
                clause = ""
            if clause and clause.lower() == tail.strip().lower():
                # "# wrap for multi-GPU; effective batch = BATCH_SIZE * gpu_count": the clause that
                # says something of its own stays, in the comment's own case (round 46, ac13)
                return prefix + (clause if body[:1].isupper() else tail.strip())
        if not any(stale) or all(stale) or sentences[-1].rstrip()[-1:] not in (".", "!", "?"):
            return text
        if any(s[:1].islower() for s in sentences[1:]):  # "e.g. the": not sentences after all
            return text
        for k, sentence in enumerate(sentences):
            if stale[k] and "; " in sentence and "\n" not in sentence:
                # "Set `n_gpus` to the number of cards; with `n_gpus > 1` the model is replicated by
                # `multi_gpu_model` (...)." among others: its true clause stays (round 58, az07)
                head = self.without_stale_sentences(sentence)
                # (not where what is left speaks of the pair: "Each replica gets a slice", "Weights
                # live in the template", nor an "otherwise ..." left without its case)
                # (nor a clause too short to say anything of its own: "We try to parallelise")
                bare = head.lstrip("# ")
                if head != sentence and bare[:1].isupper() and len(bare.split()) >= 6 and not self.names_removed(
                    head
                ) and not (
                    _OTHER_HALF.search(head) or MECHANICS.search(head) or self.wholly_stale(head)
                ):
                    sentences[k], stale[k] = head, False
        if self.mechanics_gone:
            stale = _halves_of_the_choice(sentences, stale)
            if all(stale):
                return text
        for k in range(1, len(sentences)):
            # "Remember to scale `batch_size` with it." after the sentence on `CFG['gpus']` that
            # went: what "it" named went first (round 47, af12)
            if stale[k - 1] and not stale[k] and (_POINTS_BACK.search(sentences[k]) or _VERDICT.match(sentences[k])):
                stale[k] = True
        if all(stale):
            return text
        kept = [s for s, gone in zip(sentences, stale) if not gone]
        return " ".join(kept) if not stale[0] else text[: len(text) - len(text.lstrip("# "))] + " ".join(kept)

    def wholly_stale(self, text: str) -> bool:
        """Every sentence of `text` names something removed; once the mechanics are gone, a clause
        that only names the template counts too where another names them ("always save the
        template; the parallel model cannot be reloaded on one GPU": the pair, both halves)."""
        if self.mechanics_gone and _PAIR_LABEL.match(text):
            return True  # "# template model" over the construction: there is one model
        if text.startswith("#") and "\n" not in text and _commented_code(text):
            # "#parallel_model.save('p.h5')   # don't! see TemplateCheckpoint": code on a name that
            # is gone, whatever its own note says (round 48, ah15)
            code = text.lstrip("# ").split("  #", 1)[0]
            # (`# model.layers[-2].trainable = True` on the one model is code that still runs: the
            # template's layer now; only `layers[-2].save(...)` and the like are the wrapper's idiom)
            # `#parallel = model  # uncomment to debug on one device`: the wrapper's name, bound or
            # read, is gone from the code, whatever its spelling (round 59, ba18)
            return bool(self.names_removed(_LAYER_OF_MODEL.sub("layers", code))) or bool(
                _code_names(code) & self.quoted
            )
        sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip(" .-:#")]
        stale = [bool(self.names_removed(s)) for s in sentences]
        if self.mechanics_gone and any(MECHANICS.search(s) for s in sentences) and not all(stale):
            # ("base and model share weights; the single-device copy is the one to keep": the
            # pair's sharing, said with its mechanics, round 60, bc11)
            stale = [gone or bool(_TEMPLATE.search(s) or _SHARING.search(s)) for s, gone in zip(sentences, stale)]
        if self.mechanics_gone:  # "...; with one GPU just use the model as is": the contrast goes with it
            for k in range(1, len(sentences)):
                stale[k] = stale[k] or (stale[k - 1] and bool(
                    _CONTRAST.search(sentences[k]) or _OTHERWISE.match(sentences[k]) or _VERDICT.match(sentences[k])
                    or (sentences[k - 1].rstrip().endswith(";") and _POINTS_BACK.search(sentences[k]))
                    # "We keep a reference to it: ...", "We import it from our utils package and wrap
                    # the MLP with it." after one on the old model or helper (round 63, bj11, bi20)
                    or _IT_LEADS.match(sentences[k])))
            stale = _halves_of_the_choice(sentences, stale)
            if not all(stale):  # (judged by whole sentences: "Otherwise ... multi_gpu_model ...; each GPU ...")
                whole = [s for s in _FULL_STOP.split(text.strip())[0::2] if s.strip(" .-:#")]
                named = [bool(self.names_removed(s)) for s in whole]
                return len(whole) > 1 and all(_halves_of_the_choice(whole, named))
        return bool(sentences) and all(stale)


# "Keras' `tf.distribute.MirroredStrategy`", once the helper is renamed: the strategy is not Keras's
_KERAS_OWNED: Final = re.compile(r"\b(?:Keras|keras)(?:'s|'|\u2019s|\u2019)\s+(?=`{0,2}" + re.escape(STRATEGY) + ")")
_VERSION_ASIDE: Final = re.compile(
    r"(?P<name>" + re.escape(STRATEGY) + r"`{0,2})\s*\((?:keras|tf|tensorflow)\s*v?\d+(?:\.\d+)*\+?\)", re.IGNORECASE
)
# "Old-school data parallelism (`make_parallel`)": the helper as the old way, no name for the strategy
_OLD_WAY: Final = re.compile(r"\b(?:old[- ]school|old[- ]style|legacy|outdated|deprecated)\b", re.IGNORECASE)
# a sentence whose pronoun names what the sentence before it said: "... with it.", "It splits ..."
# ("...`multi_gpu_model` raises; in that case we just train the plain model": round 65, bn14)
_IN_THAT_CASE: Final = re.compile(r"^\W*in\s+(?:that|this|which)\s+case\b", re.IGNORECASE)
_POINTS_BACK: Final = re.compile(
    r"\b(?:with|by|to|for|of|on|from|in)\s+(?:it|them)\b|^\W*(?:it|they|these|this)\s+(?!is\s+(?:a|an|the)\b)\w"
    rf"|{_IN_THAT_CASE.pattern}",
    re.IGNORECASE,
)
# (what the sentence does with "it" is what only the helper or the kept template took: import, keep
# a reference, wrap with; "We then train it" is the model's, and stays)
_IT_LEADS: Final = re.compile(
    r"^\W*(?:we|you|i)\s+(?:then\s+|also\s+|just\s+)?(?:import|keep|hold|call|wrap|apply|copy|pass)\w*\s+"
    r"(?:\w+\s+){0,3}?(?:it|them)\b",
    re.IGNORECASE,
)
# "With one GPU we just build the net." / "Otherwise the template lives on the CPU ...": the two
# halves of the old choice between the plain model and the wrapper (rounds 42 and 43, cb01, db01)
_ONE_DEVICE: Final = re.compile(
    r"\b(?:only\s+)?(?:one|a\s+single|single|1)[- ](?:gpu|device|card)s?\b|\bno\s+(?:other\s+)?gpus?\b"
    # "If `G <= 1` we train normally." (round 46, ad03): the one-GPU case as the script's condition
    r"|\bif\s+`?[A-Za-z_][\w.\[\]'\"]*\s*(?:<=\s*1|<\s*2|==\s*1)\b",
    re.IGNORECASE,
)
# "Good enough for this experiment.", "That's fine here.": a verdict on the sentence before it,
# which goes with it (round 58, az02)
_VERDICT: Final = re.compile(
    r"^\W*(?:(?:good|fine|ok|okay|safe)\s+enough|(?:that|this|it)(?:'s|\s+is)\s+(?:fine|ok|okay|good\s+enough|enough)"
    r"|fine|ok|okay)\b[^.!?]{0,40}[.!?]?\s*$",
    re.IGNORECASE,
)
_OTHERWISE: Final = re.compile(r"^\W*(?:otherwise|else|if\s+not)\b", re.IGNORECASE)
# the other half opening on the several-GPU case: "With several, the template lives on the CPU ..." (round 44, bb01)
_SEVERAL: Final = re.compile(
    r"^\W*(?:with|on|for|given|if\s+(?:there\s+are|we\s+have))\s+(?:several|multiple|more|many|two\s+or\s+more)\b",
    re.IGNORECASE,
)


def _halves_of_the_choice(sentences: list[str], stale: list[bool]) -> list[bool]:
    """`stale` with a sentence on the one-device case gone where the "Otherwise ..." sentence
    right after it, on the wrapper, goes: alone it describes half of a choice the code no longer
    makes (the strategy covers both)."""
    stale = list(stale)
    for k in range(1, len(sentences)):
        opens = _OTHERWISE.match(sentences[k]) or _SEVERAL.match(sentences[k])
        if stale[k] and not stale[k - 1] and opens and _ONE_DEVICE.search(sentences[k - 1]):
            stale[k - 1] = True
    return stale


def _filled(text: str, width: int, first: str, later: str) -> list[str]:
    """`text`'s words filled into lines within `width`, the first at indentation `first`, the rest
    at `later`; a word is never broken (a path, a `name`, a hyphenated term)."""
    return textwrap.fill(text, width=width, initial_indent=first, subsequent_indent=later,
                         break_long_words=False, break_on_hyphens=False).split("\n")


def _rewrapped(before: str, after: str) -> str:
    """`after` (`before` renamed) with each paragraph a line of which grew past 100 columns, or past
    both 79 columns and the paragraph's widest line, filled again to the widest line it had, at its
    continuation lines' indentation; a paragraph that cannot be (laid out as a list, or one line
    only) stays as renamed within 100 columns; `before` when one such passes them."""
    old_parts, new_parts = _PARAGRAPH_BREAK.split(before), _PARAGRAPH_BREAK.split(after)
    if len(old_parts) != len(new_parts):
        return before
    out: list[str] = []
    for k, (old, new) in enumerate(zip(old_parts, new_parts)):
        lines = new.split("\n")
        # (within 79 columns, or the paragraph's own widest line: a paragraph wrapped at 72 whose
        # renamed line reads 89 columns is filled again)
        limit = max(79, *(len(line) for line in old.split("\n")))
        if k % 2 or all(len(line) <= min(limit, 100) for line in lines):
            out.append(new)  # (a paragraph break, or a paragraph that still fits)
            continue
        old_lines = old.split("\n")
        # a line holding only the opening or closing quotes stays a line of its own
        quotes = ('"""', "'''", 'r"""', "r'''")
        head = [lines.pop(0)] if lines[0].strip() in quotes else []
        tail = [lines.pop()] if lines and lines[-1].strip() in quotes else []
        old_lines = [line for line in old_lines if line.strip() not in quotes]
        if len(old_lines) < 2 or not lines or _structured(old):
            if all(len(line) <= 100 for line in new.split("\n")):
                out.append(new)  # (one line, or a list: within 100 columns it stays as renamed)
                continue
            return before
        indent = old_lines[1][: len(old_lines[1]) - len(old_lines[1].lstrip())]
        width = max(len(line) for line in old_lines)
        words = " ".join(line.strip() for line in lines)
        # the first line sits at the continuation's column in the source too (after `"""`)
        filled = _filled(words, width, indent, indent)
        filled[0] = lines[0][: len(lines[0]) - len(lines[0].lstrip())] + filled[0][len(indent):]
        out.append("\n".join([*head, *filled, *tail]))
    text = "".join(out)
    return text if all(len(line) <= 100 for line in text.split("\n")) else before


# a `;` that ends a clause (not one inside parentheses: checked by the sentence's reader)
_CLAUSE_END: Final = re.compile(r";(?=\s)")


_HEADING_LINE: Final = re.compile(r"^(?P<lead>#+[ \t]+)(?P<title>\S.*?)(?P<end>[ \t]*)$")
_EXPORTED_HEADING_LINE: Final = re.compile(r"^(?P<lead>#[ \t]*#+[ \t]+)(?P<title>\S.*?)(?P<end>[ \t]*)$")
_HEADING_JOINS: Final = re.compile(r"(,\s+|;\s+|\s+(?:and|&)\s+)")


def heading_clauses_kept(line: str, prose: Prose, *, comment: bool = False) -> str:
    """A markdown heading (`### Build on CPU, train on 2 GPUs`, or `# ###` in an export) less its
    clauses on the old set-up, when another stays: `### Train on 2 GPUs` (round 62, bg16); the line
    as it is otherwise."""
    match = (_EXPORTED_HEADING_LINE if comment else _HEADING_LINE).match(line)
    if match is None:
        return line
    clauses = _HEADING_JOINS.split(match["title"])[0::2]
    if len(clauses) < 2:
        return line
    gone = [bool(prose.names_removed(c)) or prose.wholly_stale(c) for c in clauses]
    if all(gone) or not any(gone):
        return line
    title = ", ".join(c for c, stale in zip(clauses, gone) if not stale)
    if match["title"][:1].isupper():
        title = title[:1].upper() + title[1:]
    return match["lead"] + title + match["end"]


def _words(comment: str) -> str:
    return comment.lstrip("#").strip()


def _units(paragraph: list[cst.EmptyLine]) -> list[list[cst.EmptyLine]]:
    """The paragraph's lines in groups that end where a line ends a sentence (`.`, `)`, `:`...):
    a group goes or stays whole, so no sentence is cut."""
    units: list[list[cst.EmptyLine]] = [[]]
    for k, line in enumerate(paragraph):
        if line.comment is not None and (_PRAGMA.search(line.comment.value) or _SEPARATOR.match(line.comment.value)):
            units += [[line], []]  # a cell marker, an exported heading, a bare `#`: stays, alone
            continue
        units[-1].append(line)
        words = _words(line.comment.value) if line.comment is not None else ""
        after = paragraph[k + 1].comment if k + 1 < len(paragraph) else None
        following = _words(after.value) if after is not None else ""
        # a sentence ends the group; so does a short line not left mid-phrase (`# the parallel
        # copy` over `# two cards`: notes of their own, where a wrapped sentence fills its lines)
        # (and an aside opening the next line, "# ... if the wrap fails" / "# (e.g. on a CPU-only session).")
        continues = bool(following) and (
            # (a name in backquotes goes on like a word: "... machine via" / "# `multi_gpu_model`.", round 47, ae10)
            words.rsplit(" ", 1)[-1].lower() in _JOINING or (
                (following[:1].islower() or following[:1] == "`") and len(words) >= 40
            )
            or (following[:1] == "(" and len(words) >= 40)
        )
        # (a `:` or `;` before a line that goes on in lower case is mid-sentence: "...Xception:" /
        # "the result"; so is a `)` before one that goes on with a joining word: "... helper (tower
        # per GPU)" / "from our utils package, since ...", not a title "(eng -> fra)" over a note)
        joined = following.split(" ", 1)[0].lower() in _JOINING | {"since", "because", "when", "while", "where"}
        ends = words[-1:] in (".", "!", "?") or (words[-1:] in (":", ";") and not following[:1].islower()) or (
            words[-1:] == ")" and not (following[:1].islower() and joined)
        )
        if ends or not continues:
            units.append([])
    return [unit for unit in units if unit]


# words a line of a wrapped sentence can end on
_JOINING: Final = frozenset(
    "a an the is are was were be been of to and or but with by for in on at from that which so as than "
    "into onto its their our your this these those via using through over across per under between".split()
)


class _Pass(cst.CSTTransformer):
    """Renames tool phrases in comments and docstrings; drops wholly stale comment paragraphs and
    end-of-line comments; collects what else still names removed things."""

    def __init__(self, prose: Prose) -> None:
        self.prose = prose
        self.reported: list[tuple[str, str, int]] = []  # (text as written, what it names, its line), in order
        self.docstrings: set[int] = set()
        self.text_cells: set[int] = set()  # module-level strings after the docstring: exported text cells
        self.calls: list[str] = []  # the names of the calls the visit is inside, innermost last
        self._written: dict[int, str] = {}  # comment lines being read as paragraphs -> their text as written
        self.keywords: list[str | None] = []  # the keywords of the arguments the visit is inside, innermost last
        self.lines: list[str] = []  # the module's lines: a renamed string stays within its widths

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self.calls.append(func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", ""))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        self.calls.pop()
        return updated

    def visit_Arg(self, node: cst.Arg) -> None:
        self.keywords.append(node.keyword.value if node.keyword is not None else None)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        self.keywords.pop()
        return updated

    @property
    def keyword(self) -> str | None:
        """The keyword of the argument the visit is inside (`help` in `help='...'`), if any."""
        return self.keywords[-1] if self.keywords else None

    def visit_Module(self, node: cst.Module) -> None:
        self._note_docstring(node.body)
        # `"""## Model\n\nTry to spread training ..."""` between statements: a text cell as a Colab
        # export writes it, read as a module's docstring is (round 54, ar15)
        for statement in node.body[1:]:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                continue
            small = statement.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                self.text_cells.add(id(small.value))

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if node.name.value in HELPERS:
            return False  # a copied helper the file still defines is the user's code, as written (round 63, bi03)
        if isinstance(node.body, cst.IndentedBlock):
            self._note_docstring(node.body.body)
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node.name.value in HELPERS:
            return False
        if isinstance(node.body, cst.IndentedBlock):
            self._note_docstring(node.body.body)
        return True

    def _note_docstring(self, body: Sequence[cst.BaseStatement]) -> None:
        first = body[0] if body else None
        if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr):
            self.docstrings.add(id(first.body[0].value))

    def leave_FormattedString(
        self, original: cst.FormattedString, updated: cst.FormattedString
    ) -> cst.FormattedString:
        # a printed f-string: `print(f"Training using {n} GPUs (multi_gpu_model)")` loses its closing
        # aside on what was removed (round 47, af20); one naming it elsewhere is reported
        text = "".join(p.value for p in updated.parts if isinstance(p, cst.FormattedStringText))
        if not self.prose.names_removed(text):
            return updated
        last = updated.parts[-1] if updated.parts else None
        if self.calls and self.calls[-1] in _PRINTS and isinstance(last, cst.FormattedStringText):
            aside = re.search(r"\s*\([^()]*\)([.!?:]*)$", last.value)
            rest = "".join(p.value for p in updated.parts[:-1] if isinstance(p, cst.FormattedStringText))
            if aside and self.prose.names_removed(aside[0]) and not self.prose.names_removed(
                rest + last.value[:aside.start()]
            ):
                kept = last.value[:aside.start()] + aside[1]
                return updated.with_changes(parts=[*updated.parts[:-1], last.with_changes(value=kept)])
        code = cst.Module([]).code_for_node(updated)
        self._report(code, code)
        return updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if id(original) in self.text_cells:
            text = self.prose.renamed(updated.value)
            cleaned = docstring_without_stale(text, self.prose) or docstring_without_stale(
                text, self.prose, keep_first=True
            )
            text = cleaned or text
            self._report(updated.value, text)
            return updated if text == updated.value else updated.with_changes(value=text)
        # a message or help text in the code (`help="... multi_gpu_model needs >= 2"`); not a
        # file name (`"parallel_model.h5"`: no space), not a docstring (read below)
        if id(original) not in self.docstrings and " " in updated.value:
            if self.calls and self.calls[-1] == "add_argument" and self.keyword == "help":
                # `help='number of GPUs for multi_gpu_model'`: the help less its closing phrase
                # (`help='GPUs for multi_gpu_model'` -> `help='GPUs'`: a help names its option's value)
                value = self._help_asides_dropped(updated.value)
                # (a clause of its own renamed first: "global batch; multi_gpu_model splits it across
                # GPUs" stays true; an aside or closing phrase naming the tool goes)
                renamed = self._help_renamed(value)
                if renamed is not None and not self._fits(value, renamed):
                    renamed = None
                cut = (renamed if "; " in value else None) or _message_kept(value, self.prose, words=1) or renamed
                if cut is not None or value != updated.value:
                    return updated.with_changes(value=cut or value)
            if self.calls and self.calls[-1] in _PRINTS:
                # `print('weights written from the single-GPU template')`: the message less that phrase
                cut = _message_kept(updated.value, self.prose, words=1 if self.calls[-1] in _LABELS else 2)
                if cut is not None:
                    return updated.with_changes(value=cut)
                said = self._one_model_said(updated.value)
                if said is not None:
                    return updated.with_changes(value=said)
            self._report(updated.value, updated.value)
        return updated

    def _fits(self, literal: str, longer: str) -> bool:
        """`literal` written as `longer` keeps its line within 100 columns, or the file's widest line."""
        line = next((text for text in self.lines if literal in text), "")
        limit = max(100, *(len(text) for text in self.lines)) if self.lines else 100
        return len(line) + len(longer) - len(literal) <= limit

    def _help_asides_dropped(self, literal: str) -> str:
        """A help text less its asides on the old call's limits, once nothing is wrapped: "(1 = no
        replication)", "(>=2)" (round 46, ac02, ad15); one GPU is a strategy of one replica now."""
        parts = _string_parts(literal)
        if parts is None or not self.prose.mechanics_gone or "\n" in literal:
            return literal
        opening, inner, closing = parts
        kept = _PAIR_ASIDE.sub("", inner)
        return opening + kept + closing if kept.strip() else literal

    def _help_renamed(self, literal: str) -> str | None:
        """A help text naming the helper as the tool, renamed as prose is, when that leaves nothing
        removed in it: "global batch; multi_gpu_model splits it across GPUs" (round 46, ac02)."""
        parts = _string_parts(literal)
        if parts is None or "\n" in literal:
            return None
        opening, inner, closing = parts
        renamed = self.prose.renamed(inner)
        if renamed == inner or self.prose.names_removed(renamed) or re.search(r"[%{}'\"\\]", renamed):
            return None
        return opening + renamed + closing

    def _one_model_said(self, literal: str) -> str | None:
        """A printed message naming the template's half as a kind of model ("Saved the single-GPU
        model", "saved template model", "saved template weights") naming the one model, when it says
        nothing else of the pair and holds no placeholder there."""
        parts = _string_parts(literal)
        if parts is None or not self.prose.mechanics_gone or "\n" in literal:
            return None
        opening, written, closing = parts
        # "saved template", "test mae (template):": the template named alone, one model now;
        # "saved template weights": the weights, of the one model (round 52, an13)
        # ("Could not build the multi-GPU model": not replicated, round 59, bb06)
        unbuilt = _NOT_BUILT.sub(r"\g<failed> replicate the model", written)
        named = _SAVED_TEMPLATE.sub("model", _TEMPLATE_ASIDE.sub("", unbuilt))
        inner = _TEMPLATE_WEIGHTS.sub("", named)
        # ("compiled multi-GPU model on", gpus, "GPUs": the parallel half, as well)
        if inner == written and _TEMPLATE_MODEL.search(inner) is None and _PARALLEL_MODEL.search(inner) is None and (
            not _NOT_BUILT.search(written)
        ):
            return None
        # (what else it says, less the phrases renamed: "weights" alone is not the pair)
        rest = _PARALLEL_MODEL.sub("", _TEMPLATE_MODEL.sub("", _TEMPLATE_WEIGHTS_SAID.sub("", named)))
        # ("done, weights saved from the template model": the weights saved, no word of the pair's;
        # round 59, ba18)
        rest = re.sub(r"\bweights\s+(?:saved|written|stored|restored|loaded)\b", "", rest, flags=re.IGNORECASE)
        if _PAIR.search(rest) or MECHANICS.search(rest) or self.prose.names_removed(rest):
            return None
        one = _TEMPLATE_MODEL.sub(lambda m: f"{m['article'] or ''}model", inner)
        return opening + _PARALLEL_MODEL.sub(lambda m: f"{m['article'] or ''}model", one) + closing

    def _report(self, written: str, current: str) -> bool:
        code = current.startswith("#") and "\n" not in current and _commented_code(current)
        name = self.prose.names_removed(_LAYER_OF_MODEL.sub("layers", current) if code else current)
        if name:
            # the line of the text that names it, in the text as it now reads
            offset = current[:current.find(name)].count("\n") if name in current else 0
            if re.fullmatch(r"\w+", name) and name not in self.prose.removed and name not in HELPERS:
                # `parallel_model` read as the wrapper's mechanics, not a name the rewrite removed
                # (`self.parallel_model = self.model` kept, round 53, ao14): said as the phrase
                name = name.replace("_", " ")
            self.reported.append((written, " ".join(name.split()), offset))
        return bool(name)

    def _comment(self, comment: cst.Comment) -> cst.Comment:
        if _PRAGMA.search(comment.value) or self.prose.names_gone_variable(comment.value):
            # ("# weights are saved from org_model; the multi-GPU model shares them": a name no rename
            # brings back, judged as written with its paragraph; renamed first, its second clause
            # would read "the model shares them")
            return comment
        text = self.prose.renamed(comment.value)
        return comment if text == comment.value else comment.with_changes(value=text)

    def leave_Comment(self, original: cst.Comment, updated: cst.Comment) -> cst.Comment:
        return self._comment(updated)

    def leave_TrailingWhitespace(
        self, original: cst.TrailingWhitespace, updated: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        comment = updated.comment
        if comment is None or _PRAGMA.search(comment.value):
            return updated
        if self.prose.wholly_stale(_words(comment.value)) or (
            # `model = Model(inputs, outputs)  # the template model`, renamed: it says nothing now
            original.comment is not None and original.comment.value != comment.value
            and _BARE_MODEL.fullmatch(comment.value)
        ):
            return updated.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
        text = self.prose.without_stale_sentences(comment.value)
        self._report(comment.value, text)
        return updated if text == comment.value else updated.with_changes(comment=comment.with_changes(value=text))

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        result = super().on_leave(original, updated)
        if not isinstance(result, cst.CSTNode):
            return result  # type: ignore[return-value]
        changes: dict[str, object] = {}
        # a copied helper the file still defines (other files may import it: MGPU401) keeps the
        # comments that describe it ("# Data-parallel helper (after kuza55/keras-extras)", round 60, bd04)
        kept_helper = isinstance(result, (cst.FunctionDef, cst.ClassDef)) and result.name.value in HELPERS
        # (`empty_lines`: comment lines inside brackets, `callbacks = [` / `# ... ModelMGPU ...`)
        for attr in ("leading_lines", "lines_after_decorators", "header", "footer", "empty_lines"):
            if kept_helper and attr in ("leading_lines", "lines_after_decorators"):
                continue
            value = getattr(result, attr, None)
            if isinstance(value, Sequence) and value and all(isinstance(x, cst.EmptyLine) for x in value):
                before = getattr(original, attr, None)
                if isinstance(before, Sequence) and len(before) == len(value):
                    # each line's text as written, before its own renames: a sentence across lines is
                    # renamed again as a whole (`_across_lines`)
                    self._written = {id(new): old.comment.value for new, old in zip(value, before)
                                     if isinstance(old, cst.EmptyLine) and old.comment is not None}
                kept = self._paragraphs(list(value), top=isinstance(result, cst.Module) and attr == "header")
                self._written = {}
                if isinstance(result, (cst.Else, cst.ExceptHandler, cst.Finally)) and not any(
                    line.comment is not None for line in kept
                ) and any(line.comment is not None for line in value):
                    kept = []  # (a blank line that set a dropped note above `else:` apart: round 62, bh01)
                if len(kept) != len(value) or any(a is not b for a, b in zip(kept, value)):
                    changes[attr] = kept
        docstring = None if kept_helper else self._docstring(result)
        if docstring is not None:
            changes["body"] = docstring
        return result.with_changes(**changes) if changes else result

    def _paragraphs(self, lines: list[cst.EmptyLine], *, top: bool) -> list[cst.EmptyLine]:
        kept: list[cst.EmptyLine] = []
        paragraph: list[cst.EmptyLine] = []
        dropped_last = False

        def close() -> None:
            nonlocal dropped_last
            block = self._stale_code_block(paragraph)
            if block:
                # `#try:` / `#    vae = multi_gpu_model(vae, gpus=2)` / `#except ValueError:` ...: the
                # commented-out block goes whole, not its one line (round 57, aw17)
                paragraph[:] = [line for line in paragraph if not any(line is b for b in block)]
                if not paragraph:
                    dropped_last = True
                    return
            units = [self._aside_trimmed(unit) for unit in map(self._across_lines, _units(paragraph))]
            gone = [self._stale(unit) for unit in units]
            for index in range(len(units)):  # "# ## Multi-GPU wrapper" over text that all went
                if not gone[index] and _exported_heading_of_stale(units, gone, index):
                    gone[index] = True
            # "# first attempt, on the 1-GPU box:" over the commented-out call that went: it led in
            # to nothing now (round 62, bg20)
            # (or to the commented-out code that went right under it)
            for lead in range(len(units) - 1):
                if not gone[lead] and gone[lead + 1] and len(units[lead]) == 1 and _leads_in(units[lead][0]) and (
                    all(gone[lead + 1:]) or _commented_code(" ".join(
                        line.comment.value for line in units[lead + 1] if line.comment is not None))
                ):
                    gone[lead] = True
            parts = [
                ([self._trimmed(unit[0])] if len(unit) == 1 else self._stale_head_cut(self._stale_tail_cut(unit)))
                if not stale else [] for unit, stale in zip(units, gone)
            ]
            for index in range(len(parts) - 1):
                # "# ... with `tf.distribute.MirroredStrategy`;" over a clause that went: the one left
                # ends the sentence now (round 47, af14)
                last = parts[index][-1].comment if parts[index] else None
                if last is not None and gone[index + 1] and last.value.endswith(";"):
                    ended = last.with_changes(value=last.value[:-1] + ".")
                    parts[index][-1] = parts[index][-1].with_changes(comment=ended)
            left = [line for part in parts for line in part]
            if gone and gone[-1]:
                # "# # Heading" / "# " / "# <a note that went>" (an exported markdown cell): the bare
                # `#` that set the note apart goes with it (round 53, ap14)
                while left and left[-1].comment is not None and left[-1].comment.value.strip() == "#":
                    left.pop()
            if paragraph and not left:
                dropped_last = True  # and the blank line after it, so no gap is left doubled
            else:
                for comment in [line.comment.value for line in left if line.comment is not None
                                and not _PRAGMA.search(line.comment.value)]:
                    if self._report(comment, self.prose.renamed(comment)):
                        break
                kept.extend(left)
                dropped_last = False
            paragraph.clear()

        for line in lines:
            if line.comment is None:
                close()
                if dropped_last and (not kept or kept[-1].comment is None):
                    dropped_last = False
                    continue
                dropped_last = False
                kept.append(line)
            else:
                paragraph.append(line)
        close()
        return self._without_lone_helper_headings(kept)

    def _without_lone_helper_headings(self, lines: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """`lines` less an export's markdown heading on the old helper that heads nothing now:
        right above the next cell's marker, its text and the helper's cell gone ("# ### Helper for
        saving multi-GPU checkpoints", round 61, be16), with the blank lines under it."""
        if not self.prose.mechanics_gone:
            return lines
        out = list(lines)
        for k in range(len(out) - 1, -1, -1):
            comment = out[k].comment
            if comment is None or not re.match(r"#\s*#+\s", comment.value) or (k and out[k - 1].comment is not None):
                continue
            rest = k + 1
            while rest < len(out) and out[rest].comment is None:
                rest += 1
            title = comment.value.lstrip("# ")
            if rest < len(out) and CELL_MARKER.match(out[rest].comment.value) and (  # type: ignore[union-attr]
                MECHANICS.search(title) or (_DEVICE_HEADING.search(title) and _HELPER_HEADING.search(title))
            ):
                del out[k:rest]
        return out

    def _across_lines(self, unit: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """A sentence wrapped over comment lines, renamed as one text where a phrase runs across
        them ("recompile the" / "# *parallel* model (recompiling the template ...)"), and filled
        again within its widest line; `unit` as it was otherwise (and for anything but plain
        comment lines of one prefix)."""
        values = [self._written.get(id(line), line.comment.value) if line.comment is not None else "" for line in unit]
        if len(unit) < 2 or not all(values) or any(
            _PRAGMA.search(v) or _SEPARATOR.match(v) or _commented_code(v) for v in values
        ):
            return unit
        prefix = re.match(r"#+\s*", values[0])
        lead = prefix[0] if prefix else "# "
        if not all(v.startswith(lead.rstrip()) for v in values) or any(line.indent != unit[0].indent for line in unit):
            return unit
        joined = " ".join(_words(v) for v in values)
        text = self.prose.renamed(lead + joined)
        if text == lead + joined:
            return unit
        # (within its widest line, or 79 columns where that is narrower: a sentence shortened by
        # the rename is not left with one word on a line of its own)
        width = max(79, *(len(v) for v in values))
        filled = _filled(text[len(lead):], width, lead, lead)
        if any(len(line) > max(width, 100) for line in filled):
            return unit
        return [unit[min(k, len(unit) - 1)].with_changes(comment=cst.Comment(line)) for k, line in enumerate(filled)]

    def _aside_trimmed(self, unit: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """A comment wholly stale only by its closing aside ("# encoder shares weights with ae (and
        therefore with the GPU replicas)"), or by that and a closing conjunct naming the wrapper
        ("# stage 2 -- unfreeze and re-wrap (multi_gpu_model must be re-created" / "# after
        changing trainable flags)" keeps "# stage 2 -- unfreeze"), less them, when what is left
        says something; a comment of several lines is filled again within its widest line."""
        if not unit or not self._stale(unit):
            return unit
        values = [line.comment.value if line.comment is not None else "" for line in unit]
        prefix = re.match(r"#+\s*", values[0])
        lead = prefix[0] if prefix else "# "
        if len(unit) > 1 and (
            not all(values) or any(_commented_code(v) for v in values)
            or not all(v.startswith(lead.rstrip()) for v in values)
            or any(line.indent != unit[0].indent for line in unit)
        ):
            return unit
        text = lead + " ".join(_words(v) for v in values) if len(unit) > 1 else values[0]
        aside = re.search(r"\s*\([^()]*\)(?=[.!?]?\s*$)", text)
        if aside is None or not self.prose.names_removed(aside[0]):
            return unit
        kept = text[:aside.start()] + text[aside.end():]
        # "... unfreeze and re-wrap": the conjunct was the wrapper's step; the step before it stays
        conjunct = re.search(r"\s+and\s+([^,;:()]+?)(?=[.!?]?\s*$)", kept)
        if conjunct is not None and self.prose.wholly_stale(conjunct[1]) and self.prose.names_removed(conjunct[1]):
            kept = kept[:conjunct.start()] + kept[conjunct.end():]
        # (what the rest names is judged as renamed: "... via the make_parallel helper (kuza55/keras-
        # extras)" keeps "via tf.distribute.MirroredStrategy", round 62, bh03)
        named = self.prose.renamed(kept)
        if len(_words(kept).split()) < 3 or self.prose.wholly_stale(named) or self.prose.names_removed(named) or (
            _OTHER_HALF.search(kept) or _ONE_DEVICE.search(kept)  # ("single-GPU evaluation on the template")
        ):
            return unit
        kept = self.prose.renamed(kept)
        if len(unit) == 1:
            assert unit[0].comment is not None
            return [unit[0].with_changes(comment=unit[0].comment.with_changes(value=kept))]
        filled = _filled(kept[len(lead):], max(79, *(len(v) for v in values)), lead, lead)
        return [unit[min(k, len(unit) - 1)].with_changes(comment=cst.Comment(line)) for k, line in enumerate(filled)]

    def _trimmed(self, line: cst.EmptyLine) -> cst.EmptyLine:
        """A one-line comment less its sentences that name something removed, when others stay."""
        if line.comment is None or _PRAGMA.search(line.comment.value):
            return line
        text = self.prose.without_stale_sentences(heading_clauses_kept(line.comment.value, self.prose, comment=True))
        return line if text == line.comment.value else line.with_changes(comment=line.comment.with_changes(value=text))

    def _stale_tail_cut(self, unit: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """A comment of several lines less its closing sentences when each of them names something
        removed and none before does ("# Run on 2 P100s. Then `multi_gpu_model` makes a" /
        "# data-parallel copy." keeps "# Run on 2 P100s.")."""
        values = [line.comment.value if line.comment is not None else "" for line in unit]
        if any(_PRAGMA.search(v) or _SEPARATOR.match(v) or _commented_code(v) for v in values if v):
            return unit
        for index, value in enumerate(values):
            starts = sorted(m.end() for pattern in (_FULL_STOP, _CLAUSE_END) for m in pattern.finditer(value))
            if index and values[index - 1].rstrip().endswith((".", "!", "?")):
                starts.insert(0, len(value) - len(value.lstrip("# ")))
            for start in starts:
                head = " ".join([*(_words(v) for v in values[:index]), _words(value[:start])]).strip()
                tail = " ".join([_words(value[start:]), *(_words(v) for v in values[index + 1:])]).strip()
                if not head or not tail or self.prose.names_removed(head) or not self.prose.wholly_stale(tail):
                    continue
                sentence = re.split(r"[.!?]\s", head)[-1]
                if self.prose.mechanics_gone and value[:start].rstrip().endswith(";") and _SERIAL_HALF_NAMED.search(
                    sentence
                ):
                    # "# The serial ``model`` owns the weights; ``multi_model`` is the data-parallel" /
                    # "# copy ...": the clause before the `;` is the pair's other half; the sentence
                    # goes whole (round 57, aw20)
                    full = [m.end() for m in _FULL_STOP.finditer(value[:start])]
                    if full:
                        return [*unit[:index], unit[index].with_changes(
                            comment=cst.Comment(value[:full[-1]].rstrip())
                        )]
                    if not index or values[index - 1].rstrip().endswith((".", "!", "?")):
                        return list(unit[:index])
                    continue
                cut = value[:start].rstrip()
                # "...; the wrap fails." -> "...." ending as the comment did (no full stop where it had none)
                ended = values[-1].rstrip()[-1:] if values[-1].rstrip()[-1:] in (".", "!", "?") else ""
                cut = cut[:-1].rstrip() + ended if cut.endswith(";") else cut
                if cut.strip("# "):
                    line = unit[index]
                    assert line.comment is not None
                    return [*unit[:index], line.with_changes(comment=line.comment.with_changes(value=cut))]
                return list(unit[:index])
        return unit

    def _stale_head_cut(self, unit: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """A comment of several lines less its opening lines when they end a sentence (or a clause,
        at `;`) and say only what was removed ("# NOTE: saving fish_parallel would store the Lambda
        slicing layers too;" / "# fish_model is what the service loads" keeps the second line)."""
        values = [line.comment.value if line.comment is not None else "" for line in unit]
        if not all(values) or any(_PRAGMA.search(v) or _SEPARATOR.match(v) or _commented_code(v) for v in values):
            return unit
        for index in range(1, len(values)):
            if not values[index - 1].rstrip().endswith((".", ";", "!", "?")):
                continue
            head = " ".join(_words(v) for v in values[:index]).strip()
            tail = " ".join(_words(v) for v in values[index:]).strip()
            if tail and self.prose.wholly_stale(head) and not self.prose.names_removed(tail):
                return list(unit[index:])
        # ... or a sentence ending inside a later line ("... replicate it on G GPUs with" /
        # "# multi_gpu_model. Batch size is the *global* batch size." keeps the second sentence)
        for index in range(1, len(values)):
            prefix = re.match(r"#+\s*", values[index])
            lead = prefix[0] if prefix else "# "
            for stop in _FULL_STOP.finditer(values[index]):
                head = " ".join([*(_words(v) for v in values[:index]), _words(values[index][:stop.start()])]).strip()
                tail = " ".join([values[index][stop.end():], *(_words(v) for v in values[index + 1:])]).strip()
                if tail and self.prose.wholly_stale(head) and not self.prose.names_removed(tail):
                    first = unit[index].with_changes(comment=cst.Comment(lead + values[index][stop.end():]))
                    return [first, *unit[index + 1:]]
        return unit

    def _stale_code_block(self, paragraph: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
        """The widest run of `paragraph`'s comment lines that, uncommented, is a block of code
        with a compound statement and holds a line of code on something removed; [] if none."""
        values = [line.comment.value if line.comment is not None else "" for line in paragraph]
        stale = [i for i, v in enumerate(values) if v and _commented_code(v) and self.prose.wholly_stale(v)]
        if not stale or len(paragraph) > 60:
            return []
        for width in range(len(values), 1, -1):
            for start in range(0, len(values) - width + 1):
                end = start + width
                window = values[start:end]
                if any(start <= i < end for i in stale) and all(window) and commented_block(window):
                    return list(paragraph[start:end])
        return []

    def _stale(self, unit: list[cst.EmptyLine]) -> bool:
        comments = [line.comment.value for line in unit if line.comment is not None]
        if len(comments) == 1 and _commented_code(comments[0]):  # judged as code (`wholly_stale`)
            return self.prose.wholly_stale(comments[0])
        return (
            bool(comments) and not any(_PRAGMA.search(c) or _SEPARATOR.match(c) for c in comments)
            and self.prose.wholly_stale(" ".join(_words(c) for c in comments))
        )

    def _docstring(self, node: cst.CSTNode) -> object | None:
        """The body with its docstring's tool phrase renamed, or None when nothing changes."""
        body: Sequence[cst.BaseStatement]
        if isinstance(node, cst.Module):
            body = node.body
        elif isinstance(node, (cst.ClassDef, cst.FunctionDef)) and isinstance(node.body, cst.IndentedBlock):
            body = node.body.body
        else:
            return None
        first = body[0] if body else None
        if not (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
                and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString)):
            return None
        string = first.body[0].value
        text = self.prose.renamed(string.value)
        cleaned = docstring_without_stale(text, self.prose)
        if cleaned == "" and isinstance(node, cst.Module):
            # a module's docstring keeps its summary line (reported below), not the paragraphs after it
            cleaned = docstring_without_stale(text, self.prose, keep_first=True)
        if cleaned == "" and not isinstance(node, cst.Module):
            # its summary line may still say what the code does, once it is read alone ("Save the
            # single-device template after every epoch." -> "Save the model after every epoch.")
            cleaned = self._summary_alone(string.value) or ""
        rest = body[1] if len(body) > 1 else None
        if cleaned == "" and isinstance(rest, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and not isinstance(
            node, cst.Module
        ):
            # every sentence was about the old wrapper: the docstring goes, its comments stay
            own = list(rest.leading_lines)
            while own and own[0].comment is None:  # no blank line left right under the `def`/`class`
                own.pop(0)
            moved = rest.with_changes(leading_lines=[*first.leading_lines, *own])
            assert isinstance(node, (cst.ClassDef, cst.FunctionDef)) and isinstance(node.body, cst.IndentedBlock)
            return node.body.with_changes(body=[moved, *body[2:]])
        text = cleaned or text
        self._report(string.value, text)
        if text == string.value:
            return None
        new_first = first.with_changes(body=[first.body[0].with_changes(value=string.with_changes(value=text))])
        if isinstance(node, cst.Module):
            return [new_first, *body[1:]]
        assert isinstance(node, (cst.ClassDef, cst.FunctionDef)) and isinstance(node.body, cst.IndentedBlock)
        return node.body.with_changes(body=[new_first, *body[1:]])


    def _summary_alone(self, literal: str) -> str | None:
        """A docstring of its one-line summary, renamed on its own, when it then names nothing
        removed nor either half of the pair and says something (three words or more); None otherwise."""
        parts = _string_parts(literal)
        if parts is None:
            return None
        opening, inner, closing = parts
        summary = _PARAGRAPH_BREAK.split(inner.strip())[0]
        if "\n" in summary or len(summary.split()) < 3:
            return None
        rest = _TEMPLATE_MODEL.sub("", summary)
        if self.prose.mechanics_gone and not (MECHANICS.search(rest) or _PAIR.search(rest) or _PURPOSE.search(rest)):
            # ("the single-device template" is a phrase of the mechanics; the only one here)
            summary = _TEMPLATE_MODEL.sub(r"\g<article>model", summary)
        alone = self.prose.renamed(opening + summary + closing)
        # (nothing left of the pair either: "Owns both the template.")
        return None if self.prose.names_removed(alone) or _OTHER_HALF.search(alone) else alone


_QUOTES: Final = re.compile(r'(?P<prefix>[rRuU]?)(?P<quote>"""|\'\'\'|"|\')')


def _string_parts(literal: str) -> tuple[str, str, str] | None:
    """(opening prefix and quotes, text, closing quotes) of a string literal; None for an f-string,
    a bytes literal or anything else this cannot take apart."""
    quotes = _QUOTES.match(literal)
    if quotes is None or not literal.endswith(quotes["quote"]) or len(literal) < 2 * len(quotes["quote"]) + len(
        quotes["prefix"]
    ):
        return None
    start = len(quotes["prefix"]) + len(quotes["quote"])
    return literal[:start], literal[start:len(literal) - len(quotes["quote"])], quotes["quote"]
_PARAGRAPH_BREAK: Final = re.compile(r"(\n[ \t]*\n)")
# a sentence ends at `.`/`!`/`?` before a space, not in "e.g." or "i.e."
_SENTENCE: Final = re.compile(r"\S.*?(?:(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)[.!?](?=\s|$)|$)", re.DOTALL)


# "Usage: python train.py --gpus 2" on a line of its own: a command, whole without a full stop
_LABEL_LINE: Final = re.compile(r"(?:usage|examples?|run|command)\s*:[^\n]*(?=\n)", re.IGNORECASE)


def _is_label(paragraph: str, start: int, end: int) -> bool:
    label = _LABEL_LINE.match(paragraph, start)
    return label is not None and label.end() == end


def _sentence_spans(paragraph: str) -> list[tuple[int, int]]:
    """The sentences of a paragraph; a `.` inside parentheses ends none ("(e.g. one GPU.)"), a
    labelled line ("Usage: python train.py --gpus 2") is one."""
    spans: list[tuple[int, int]] = []
    for match in _SENTENCE.finditer(paragraph):
        last = paragraph[spans[-1][0]:spans[-1][1]] if spans else ""
        # (a parenthesis never closed, a typo, joins nothing)
        if last.count("(") > last.count(")") and ")" in paragraph[match.start():]:
            spans[-1] = (spans[-1][0], match.end())
            continue
        start, end = match.span()
        label = _LABEL_LINE.match(paragraph, start, end)
        while label is not None:
            spans.append((start, label.end()))
            start = label.end() + len(paragraph[label.end():end]) - len(paragraph[label.end():end].lstrip())
            label = _LABEL_LINE.match(paragraph, start, end)
        if start < end:
            spans.append((start, end))
    return spans


def _refilled(paragraph: str, written: str) -> str:
    """`paragraph` (`written` less a sentence) filled again within `written`'s widest line when a
    line of it but the last is left under half that width ("The" / "replicas share ..."), at its
    lines' indentation."""
    lines = paragraph.split("\n")
    old = written.split("\n")
    width = max(len(line) for line in old)
    if len(lines) < 2 or len(old) < 2 or all(len(line) > width // 2 for line in lines[:-1]):
        return paragraph
    indent = old[1][: len(old[1]) - len(old[1].lstrip())]
    first = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    filled = _filled(" ".join(line.strip() for line in lines), width, first, indent)
    return "\n".join(filled) if all(len(line) <= max(width, 100) for line in filled) else paragraph


def _entries_trimmed(paragraph: str, prose: Prose) -> str:
    """An `Args:`-style list whose entries each lose a closing clause or sentence naming something
    removed, when the rest of the entry names nothing removed; refilled at the entry's
    indentation within the list's widest line."""
    lines = paragraph.split("\n")
    width = max(len(line) for line in lines)
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        field = _ENTRY.match(line)
        bullet = _BULLET.match(line)
        if field is None and bullet is None:  # (a heading such as `Args:`, or a line of its own)
            out.append(line)
            k += 1
            continue
        indent = len(line) - len(line.lstrip())
        end = k + 1
        while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > indent:
            end += 1
        text = " ".join(part.strip() for part in lines[k:end])
        if bullet is not None:
            # `* We save the parallel model; on load, take layers[-2].`: an item wholly about the old
            # pair goes, its lines with it (round 40, ea20); any other item stays as it is
            if not (end - k <= 4 and prose.wholly_stale(text.lstrip("*- "))):
                out += lines[k:end]
            k = end
            continue
        if end - k > 4 or not prose.names_removed(text):
            out += lines[k:end]
            k = end
            continue
        assert field is not None  # (neither a heading nor an item: an entry)
        label = field[0].strip()
        said = text[len(label):].strip()
        left = prose.without_stale_sentences(said)
        if left == said or not left.strip() or prose.names_removed(left) or _PAIR.search(left):
            out += lines[k:end]
        else:
            if said.endswith(".") and not left.endswith("."):
                left += "."
            second = lines[k + 1] if end - k > 1 else ""
            later = second[:len(second) - len(second.lstrip())] if second else " " * (indent + 4)
            out += _filled(f"{label} {left}", width, line[:indent], later)
        k = end
    return "\n".join(out)


# an entry of an `Args:` list: `num_gpus: ...`, `gpus (int): ...`
_ENTRY: Final = re.compile(r"^\s*[\w*]+(?:\s*\([^)]*\))?\s*:\s")
# an item of a bulleted list: `  * text`, `- text`
_BULLET: Final = re.compile(r"^\s*[*-]\s+")


_MARKDOWN_HEADING: Final = re.compile(r"^\s*#{1,6}\s+\S")


def docstring_without_stale(value: str, prose: Prose, *, keep_first: bool = False) -> str | None:
    """A docstring literal less each sentence that names something removed (its lines, when it had
    them to itself; a paragraph left with none goes with its blank line); "" when every sentence
    does; None when none does. `keep_first`: the first paragraph stays as it is."""
    if "\r" in value:  # a CRLF file's docstring keeps its line ends; one of mixed line ends is left
        if value.count("\r") != value.count("\r\n") or value.count("\n") != value.count("\r\n"):
            return None
        cleaned = docstring_without_stale(value.replace("\r\n", "\n"), prose, keep_first=keep_first)
        return None if cleaned is None else cleaned.replace("\n", "\r\n")
    literal = _string_parts(value)
    if literal is None:
        return None
    opening, inner, closing = literal
    core = inner.strip()
    if not core:
        return None
    head, tail = inner[:len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()):]
    parts = _PARAGRAPH_BREAK.split(core)
    kept: list[str] = []
    changed = False
    for k in range(0, len(parts), 2):
        paragraph = parts[k]
        # a markdown heading over the paragraph (a Colab export's text cell, "# Flowers (VGG16)")
        # is a line of its own: never joined to the sentences under it
        heading, newline, rest = paragraph.partition("\n")
        if newline and _MARKDOWN_HEADING.match(heading) and rest.strip():
            heading, paragraph = heading + newline, rest
        else:
            heading = ""
        written = parts[k][len(heading):]
        spans = _sentence_spans(paragraph)
        stale = [(a, b) for a, b in spans if prose.names_removed(paragraph[a:b])]
        # (a "Usage: python train.py" line is no sentence on the pair: it stays)
        said = [(a, b) for a, b in spans if not _is_label(paragraph, a, b)]
        if stale and len(stale) < len(said) and not _structured(paragraph) and prose.wholly_stale(
            " ".join(paragraph[a:b] for a, b in said)
        ):
            # "... replicated by multi_gpu_model. The replicas share their weights with the template
            # model, ...": the sentences around the removed name speak of the old pair too
            stale = said
        # an `Args:` list is no run of sentences: left, reported
        if keep_first and k == 0 and len(spans) == 1 and stale and not _structured(paragraph):
            # the module's one-sentence summary stays, less a phrase about the old mechanics
            clauses = {(a, b): _summary_kept(paragraph[a:b], prose) for a, b in stale}
            if all(clauses.values()):
                for a, b in reversed(stale):
                    paragraph = paragraph[:a] + clauses[(a, b)] + paragraph[b:]
                changed = True
        if stale and _structured(paragraph) and not (keep_first and k == 0):
            # `num_gpus: number of GPUs; > 1 wraps the network in ModelMGPU ...`: an entry loses
            # its clause on the removed helper; the entry and the list stay
            trimmed = _entries_trimmed(paragraph, prose)
            changed = changed or trimmed != paragraph
            if trimmed != paragraph and "\n" not in trimmed.strip() and trimmed.rstrip().endswith(":"):
                if heading:
                    kept += [parts[k - 1], heading.rstrip("\n")] if k and kept else [heading.rstrip("\n")]
                continue  # ("Training notes:" over items that all went: the paragraph goes)
            paragraph = trimmed
        if not stale or _structured(paragraph) or (keep_first and k == 0):
            kept += [parts[k - 1], heading + paragraph] if k and kept else [heading + paragraph]
            continue
        changed = True
        # "We train on the 4-GPU node; the call below keeps cpu_merge.": the clause before the `;` stays
        clauses = {(a, b): _clause_kept(paragraph[a:b], prose) for a, b in stale}
        if len(stale) == len(spans) and not any(clauses.values()):
            if k == 0 and len(parts) > 1 and _structured(parts[2]):
                # the summary line over an `Args:`/`Returns:` section: nothing can take its place
                kept.append(heading + paragraph)
            elif heading:  # the heading stays, over the cell's code
                kept += [parts[k - 1], heading.rstrip("\n")] if k and kept else [heading.rstrip("\n")]
            continue  # the whole paragraph, with the break before it
        for a, b in reversed(stale):
            if clauses[(a, b)]:
                paragraph = paragraph[:a] + clauses[(a, b)] + paragraph[b:]
                continue
            before = paragraph[:a]
            # the space before the sentence goes with it; at the paragraph's start, the space after
            # (its line's indentation stays: a later paragraph is indented under the quotes)
            lead = before.rpartition("\n")[2]
            paragraph = before.rstrip(" \t") + paragraph[b:] if before.strip() else lead + paragraph[b:].lstrip()
        lines = [line.rstrip() for line in paragraph.split("\n")]
        paragraph = _refilled("\n".join(line for line in lines if line.strip()), written)
        kept += [parts[k - 1], heading + paragraph] if k and kept else [heading + paragraph]
    if not changed:
        return None
    if not kept:
        return ""
    kept[0] = kept[0].lstrip(" \t")  # a later paragraph now first: right after the quotes
    if "\n" not in head + "".join(kept) and not "".join(kept).endswith((closing[0], "\\")):
        tail = tail.strip("\n\r \t")  # one line left: its closing quotes on that line, as PEP 257 has it
    return opening + head + "".join(kept) + tail + closing


# what prints a message: `print(...)`, a logger's methods
# a plot's labels: `plt.title('loss (parallel model)')` (a word is a whole label)
_LABELS: Final = frozenset({"title", "set_title", "suptitle", "xlabel", "ylabel", "set_xlabel", "set_ylabel"})
_PRINTS: Final = frozenset({"print", "info", "debug", "warning", "warn", "write"}) | _LABELS
# a message's closing phrase: "... from the single-GPU template", "... with multi_gpu_model"
_FAILED_LEAD: Final = re.compile(
    r"^\s*(?P<tag>\[\w+\]\s*)?(?:[\w.`]+|the\s+wrap)\s+(?:failed|raised(?:\s+an?\s+\w+)?|errored|is\s+unavailable)\s*[,:;-]\s*",
    re.IGNORECASE,
)
# (the space after the word left to the next phrase: "replicate the model on with multi_gpu_model"
# loses " with ...", not " on with ...", round 46, ad15)
_CLOSING_PHRASE: Final = re.compile(r"\s+(?:from|of|on|to|into|with|via|using|through|for)(?=\s)", re.IGNORECASE)


def _helper_clause(part: str) -> str:
    """The `;` clause of `part` naming a helper, when the others say nothing of the old pair but
    its replicas: "with `multi_gpu_model`; each replica sees half of every batch" is renamed, the
    replicas being the strategy's too (round 52, an13); `part` itself otherwise."""
    clauses = part.split("; ")
    named = [c for c in clauses if _HELPER_NAMES.search(c)]
    others = [c for c in clauses if not _HELPER_NAMES.search(c)]
    if len(named) != 1 or not others or any(
        MECHANICS.search(c) or _PAIR.search(re.sub(r"\breplicas?\b", "", c, flags=re.IGNORECASE)) for c in others
    ):
        return part  # ("...; train on a single device": the old pair's half, round 48, ag19)
    return named[0]


def _message_kept(literal: str, prose: Prose, *, words: int = 2) -> str | None:
    """A printed message (a string literal, quotes and all) less its closing phrase naming what was
    removed, when what is left says something (`words` or more) and names nothing removed."""
    parts = _string_parts(literal)
    if parts is None or "\n" in literal:
        return None
    opening, inner, closing = parts
    end = re.search(r"[.!?:]*\s*$", inner)
    stop = end.start() if end else len(inner)
    # "model saved (single-GPU version)": the aside goes
    aside = re.search(r"\s*\([^()%{}'\"\\]*\)$", inner[:stop])
    if aside and prose.names_removed(aside[0]) and not prose.names_removed(inner[:aside.start()]) and len(
        inner[:aside.start()].split()
    ) >= words:
        return opening + inner[:aside.start()] + inner[stop:] + closing
    # "multi_gpu_model failed, training on a single device": what follows the failure stays
    failed = _FAILED_LEAD.match(inner)
    if failed and prose.names_removed(failed[0]) and not prose.names_removed(inner[failed.end():]) and len(
        inner[failed.end():stop].split()
    ) >= 2:
        rest = inner[failed.end():]  # (after its `[INFO] ` tag, kept)
        return opening + (failed["tag"] or "") + rest[0].upper() + rest[1:] + closing
    # "number of GPUs; >1 uses keras multi_gpu_model": the clause after the last `;` goes whole
    # (round 50, ak03: cut at its first "of", the help read "number")
    head, semicolon, tail = inner[:stop].rpartition("; ")
    # (not "saved template model; the parallel one cannot be loaded": the head is the pair's too)
    if semicolon and prose.names_removed(tail) and not prose.names_removed(head) and len(head.split()) >= words \
            and not re.search(r"[%{}'\"\\]", tail) and not _PAIR.search(head):
        return opening + head.rstrip(" ,;") + inner[stop:] + closing
    for phrase in reversed(list(_CLOSING_PHRASE.finditer(inner[:stop]))):  # the shortest first
        head, tail = inner[:phrase.start()], inner[phrase.start():stop]
        if re.search(r"[%{}'\"\\]", tail) or not prose.names_removed(tail):
            continue
        if ";" in tail:  # a phrase never spans a clause
            return None
        if not prose.names_removed(head) and len(head.split()) >= words:
            # "GPUs for multi_gpu_model (1 disables it)": an aside of its own after the phrase stays
            aside = re.search(r"\s*\([^()]*\)$", tail)
            kept = aside[0] if aside and not prose.names_removed(aside[0]) and prose.names_removed(
                tail[:aside.start()]) else ""
            return opening + head.rstrip(" ,;") + kept + inner[stop:] + closing
        return None
    return None


def _summary_kept(sentence: str, prose: Prose) -> str:
    """A module's one-sentence summary less its closing phrase on the old mechanics ("Speech
    enhancement model (denoising) with parallel_model.save kept as in the original." -> "Speech
    enhancement model (denoising)."): what the file is stays; "" when no such phrase can go."""
    for joint in _MECHANICS_PHRASE.finditer(sentence):
        head = sentence[:joint.start()]
        if (prose.names_removed(head) or len(head.split()) < 2 or head.count("(") != head.count(")")
                or head.count("`") % 2):
            break
        if prose.names_removed(sentence[joint.start():]):
            end = sentence.rstrip()[-1:]
            return head.rstrip(" ,") + (end if end in ".!?" else ".")
    return ""


def _clause_kept(sentence: str, prose: Prose) -> str:
    """The first clause of a stale sentence ("A; B.", "A, and the count decides B."), closed as
    the sentence was, when only the clause after the `;` (or the `, and` that opens a new subject)
    names something removed; "" otherwise."""
    # "Uses every GPU the machine has (counted through device_lib).": the aside at its end goes,
    # when what is left says something of its own ("Return (model, parallel)." is no sentence)
    aside = re.sub(r"\s*\([^()]*\)(?=[.!?]?\s*$)", lambda m: "" if prose.names_removed(m[0]) else m[0], sentence)
    if aside != sentence and len(aside.split()) >= 4 and not prose.names_removed(aside):
        return aside
    # "Build the forecaster and its multi-GPU copy.": the copy goes, the model it built stays
    alone = _PAIR_CONJUNCT.sub("", sentence)
    if alone != sentence and len(alone.split()) >= 3 and not prose.names_removed(alone) and not re.search(
        r"\bboth\b", alone, re.IGNORECASE  # ("Owns both the template and the parallel model.")
    ):
        return alone
    first, semicolon, second = sentence.partition(";")
    if semicolon and prose.names_removed(first) and second.strip() and not prose.names_removed(second):
        # "The network is loaded on the CPU ...; no training happens here.": the second clause stays
        rest = second.strip()
        if (first.count("(") == first.count(")") and not first.count("`") % 2 and rest[:1].isalpha()
                and len(rest.split()) >= 4  # (a statement of its own, not "see utils/mgpu.py")
                and not _CONTRAST.search(rest)  # ("this callback saves the original model instead")
                and not _SUBJECTLESS.match(rest)  # ("kept here because ...": the helper was)
                and not _IN_THAT_CASE.match(rest)  # ("in that case we just train the plain model")
                and not _PAIR_HALF.search(rest)):  # ("the template model is what we checkpoint": one model now)
            head, newline, tail = rest.partition("\n")
            if newline and len(head.split()) <= 2:  # "this" / "    callback saves ...": one line again
                rest = head + " " + tail.lstrip()
            return rest[0].upper() + rest[1:]
    if not semicolon:
        joined = _JOINED_CLAUSE.search(sentence)
        first, semicolon = (sentence[:joined.start()], ";") if joined else (sentence, "")
    if not semicolon or not first.strip() or prose.names_removed(first):
        return ""
    if prose.mechanics_gone and _SERIAL_HALF_NAMED.search(first):
        # "The serial ``model`` owns the weights; ``multi_model`` is the data-parallel copy ...": a
        # half of the pair, told apart from the other that went (round 57, aw20)
        return ""
    if first.count("(") != first.count(")") or first.count("`") % 2:
        return ""  # (a `;` inside parentheses or code: no clause of the sentence ends there)
    end = sentence.rstrip()[-1:]
    return first.rstrip() + (end if end in ".!?" else "")  # (ending as the sentence did)


# "still use `multi_gpu_model` here because ...": the helper kept for a reason of its own
_STILL_USED: Final = re.compile(r"\bstill\s+(?:use|uses|using|need|needs|rel(?:y|ies)\s+on)\b", re.IGNORECASE)
# a half of the old pair, named as such: "the template model is what we checkpoint" (round 41, fa01)
# (or the wrapper: "...; the wrapper is what we compile and fit", round 48, ah01)
_PAIR_HALF: Final = re.compile(
    r"\b(?:template|serial|parallel)\s+model\b|\btemplate\b|\b(?:the|our|a)\s+wrapper\b"
    # ("...; with one GPU it returns the plain model.": the other case of the clause that went; round 64, bl15)
    r"|^\s*(?:with|on)\s+(?:one|a\s+single|1)\s+(?:gpus?|devices?|cards?)\b",
    re.IGNORECASE,
)
# a clause whose subject was the one before: "make_parallel is the slicing trick; kept here because ..."
_SUBJECTLESS: Final = re.compile(
    r"(?:[a-z]+ed|kept|left|built|written|taken|made|given|shown|known|meant|held|run|done)\b(?!\s+(?:by|as)\b)"
    r"|(?:it|its|they)\b"  # ("...; it splits every batch": what "it" was went first)
)
# words that point back at what the clause before said, gone with it
_CONTRAST: Final = re.compile(r"\b(?:instead|as\s+well|too|also|either|both|the\s+other|original|as\s+is)\b",
                              re.IGNORECASE)
# where a phrase on how the file ran begins: "... using the ModelMGPU wrapper so that ...", ", with ..."
_MECHANICS_PHRASE: Final = re.compile(
    r",?\s+(?:using|with|via|through|on\s+top\s+of|following)\s+"
    # "Object-count regression, ModelMGPU variant that tolerates gpus == 1."
    r"|,\s+(?=(?:the\s+|a\s+)?`?(?:" + "|".join(HELPERS) + r")\b)",
    re.IGNORECASE,
)
# "... and its multi-GPU copy." at a sentence's end: the other half of the old pair
_PAIR_CONJUNCT: Final = re.compile(
    r",?\s+(?:and|with|plus)\s+(?:its|the|a|their|our)\s+(?:multi-?gpu|parallel|data-?parallel|gpu)\s+"
    r"(?:cop(?:y|ies)|wrappers?|twins?|versions?|replicas?|models?)(?=[.!?]?\s*$)"
    # "Build the U-Net and, if several GPUs are configured, its replica."
    r"|,?\s+and,?\s+(?:if|when)\s+[^,.;]{1,60},\s+its\s+(?:(?:multi-?gpu|parallel|gpu)\s+)?"
    r"(?:cop(?:y|ies)|replicas?|twins?)(?=[.!?]?\s*$)",
    re.IGNORECASE,
)
# ", and the number of ids decides ...": a second clause with its own subject, not a list's last item.
_JOINED_CLAUSE: Final = re.compile(r",\s+(?:and|so)\s+(?:the|this|that|it|its|we|our|each|every|then)\b", re.IGNORECASE)


def _structured(paragraph: str) -> bool:
    """A docstring paragraph laid out as a list (`Args:` / `name: text` lines, hanging indents);
    not one sentence led by a label ("Callbacks: early stopping. ...")."""
    lines = paragraph.split("\n")
    indents = {len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()}
    # a field starts a line after one that ended; "It returns" / "both: the model ..." is one sentence
    fields = sum(
        1 for k, line in enumerate(lines)
        if _FIELD.match(line) and (k == 0 or lines[k - 1].rstrip().endswith((".", ":", ";", "!", "?", ","))
                                   or _FIELD.match(lines[k - 1]))
    )
    def heads_a_list(k: int) -> bool:  # "Args:" over its fields; not "... helper:" / "each GPU gets ..."
        if not lines[k].rstrip().endswith(":"):
            return False
        after = lines[k + 1] if k + 1 < len(lines) else ""
        indent = len(lines[k]) - len(lines[k].lstrip())
        return not (after.strip()[:1].islower() and len(after) - len(after.lstrip()) == indent)
    return len(indents) > 1 or any(heads_a_list(k) for k in range(len(lines))) or fields > 1 or (
        fields == 1 and not _FIELD.match(lines[0])
    )


_FIELD: Final = re.compile(r"^\s*(?:[\w*]+(?:\s*\([^)]*\))?\s*:\s|[-*+]\s|:\w+)")


def drop_stale(module: cst.Module, prose: Prose) -> tuple[cst.Module, list[tuple[str, str, int]]]:
    """`module` with its prose brought up to date; and the texts still naming removed things."""
    if prose._pattern is None and not prose.removed:
        return module, []
    visitor = _Pass(prose)
    visitor.lines = module.code.splitlines()
    new = module.visit(visitor)
    return new, visitor.reported


def markdown(
    text: str, prose: Prose, *, title: bool = False, code_follows: bool = False
) -> tuple[str, list[tuple[int, str, str]]]:
    """A markdown cell's text with the helper named as the tool renamed and each wholly stale
    sentence's lines gone (a heading, a list item or a blank line ends a sentence's lines; a
    heading itself stays); and
    (line, text, name) of each kept line still naming something removed. `code_follows`: a code
    cell comes next, which the cell's last heading heads too."""
    lines = text.splitlines(keepends=True)
    units: list[list[int]] = [[]]
    for k, line in enumerate(lines):
        body = line.strip()
        if not body or body.startswith(("#", "-", "*", "+", "|", "```")) or body[:2].rstrip(".").isdigit():
            units.append([])  # a unit of its own, and the one before ends
        units[-1].append(k)
        # (a line closing an aside ends a sentence only where the aside does: "(2 GPUs on the rig)" /
        # "and keeps the template." is one sentence, round 46, ad04)
        following = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if not body or body.startswith("#") or body[-1:] in (".", "!", "?", ";") or (
            # (a `:` before a line that goes on in lower case or with a `name` is mid-sentence:
            # "... from the keras issue tracker:" / "`save`/`load` calls are ...", round 47, af02)
            body[-1:] == ":" and not (following[:1].islower() or following[:1] == "`")
        ) or (
            body.endswith(")") and (body.rstrip(")")[-1:] in (".", "!", "?") or body.startswith("("))
        ):
            units.append([])
    kept: list[str] = []
    reported: list[tuple[int, str, str]] = []
    units = [u for u in units if u]
    renamed_units = [_renamed_unit([lines[k] for k in unit], prose) for unit in units]
    stale = [_stale_unit(lines, unit, renamed, prose) for unit, renamed in zip(units, renamed_units)]
    for index, unit in enumerate(units):  # "Two pieces make this work:" over a list that all went
        if (lines[unit[-1]].rstrip().endswith(":") and not stale[index]
                and _introduces_stale_list(lines, units, stale, index)):
            stale[index] = True
    for index, unit in enumerate(units):  # "### Multi-GPU notes" over notes that all went
        named = prose.names_gone_identifier(renamed_units[index][0])
        closing = not any(lines[u[0]].lstrip().startswith("#") for u in units[index + 1:])
        # (not one on the old mechanics itself: "## A multi-GPU model that can still be
        # checkpointed", round 61, bf13)
        mechanical = bool(prose.mechanics_gone and MECHANICS.search(heading_clauses_kept(lines[unit[0]], prose)))
        if code_follows and closing and not named and not _HEADS_TEXT.search(lines[unit[0]]) and not mechanical:
            # "## Auto-detecting GPUs" over text that went still heads the code cell below it,
            # which detects them (round 58, az09)
            continue
        if lines[unit[0]].lstrip().startswith("#") and not stale[index] and _heading_of_stale(
            lines, units, stale, index, named=named or mechanical
        ):
            if title and index == 0 and named:
                # the notebook's title ("# make_parallel (kuza55 style)") says what it does now,
                # at its level, rather than leave the notebook untitled (round 55, at06)
                heading = lines[unit[0]]
                level = heading.lstrip()[:len(heading.lstrip()) - len(heading.lstrip().lstrip("#"))]
                renamed_units[index] = [f"{level} {_TITLE}{heading[len(heading.rstrip(chr(13) + chr(10))):]}"]
            else:
                stale[index] = True
    for index, (unit, renamed, gone) in enumerate(zip(units, renamed_units, stale)):
        if gone:
            if kept and not kept[-1].strip() and unit[-1] + 1 < len(lines) and not lines[unit[-1] + 1].strip():
                kept.pop()  # no doubled blank line where it stood
            continue
        if index + 1 < len(stale) and stale[index + 1] and renamed[-1].rstrip("\r\n").endswith(";"):
            # "... later on a single GPU;" / "the parallel copy is compiled again.": the clause that
            # went ended the sentence, the one left ends it now (round 38, lb07)
            last = renamed[-1].rstrip("\r\n")
            renamed = [*renamed[:-1], last[:-1] + "." + renamed[-1][len(last):]]
        if len(renamed) == 1:  # "Kernel with 2 GPUs. The template lives on the CPU and ...": the first stays
            body = renamed[0].rstrip("\r\n")
            trimmed = prose.without_stale_sentences(heading_clauses_kept(body, prose))
            if trimmed != body and trimmed[-1:] not in (".", "!", "?") and body[-1:] in (".", "!", "?"):
                trimmed += "."  # "We train on 4 GPUs; on a laptop `multi_gpu_model` raises." -> "...GPUs."
            renamed = [trimmed + renamed[0][len(body):]]
        elif _plain_paragraph(renamed):
            # "Trains on all the GPUs. When more than one card is visible we build the network" /
            # "on the CPU and replicate it with `multi_gpu_model`, ...": that sentence goes, the
            # rest is filled again within the paragraph's widest line
            body = " ".join(line.strip() for line in renamed)
            trimmed = prose.without_stale_sentences(body)
            if trimmed != body and trimmed.strip():
                if trimmed[-1:] not in (".", "!", "?") and body[-1:] in (".", "!", "?"):
                    trimmed += "."
                width = max(len(line.rstrip("\r\n")) for line in renamed)
                end = renamed[-1][len(renamed[-1].rstrip("\r\n")):]
                newline = renamed[0][len(renamed[0].rstrip("\r\n")):] or "\n"
                filled = _filled(trimmed, width, "", "")
                renamed = [line + newline for line in filled[:-1]] + [filled[-1] + end]
                unit = unit[:len(renamed)]
        for k, line in zip(unit, renamed):
            name = prose.names_removed(line)
            # a heading "Evaluation with the replicated model" titles what the strategy does too
            # (round 54, ar12); a sentence saying so is the old pair's ("not the replicated model")
            titled = line.lstrip().startswith("#")
            if name and not (titled and re.fullmatch(r"replicated\s+model", name, re.IGNORECASE)):
                reported.append((k + 1, line, name))
        kept.extend(renamed)
    new = "".join(kept).rstrip("\r\n")  # ends as the cell ended, not on a blank line a dropped line left
    if new.strip() and text != text.rstrip("\r\n"):
        new += text[len(text.rstrip("\r\n")):]
    return (new if new.strip() else ""), reported


# a notebook's title that named the removed helper, over text that all went
_TITLE: Final = f"Data-parallel training with {STRATEGY}"
# a heading about the old multi-GPU set-up: "### Multi-GPU notes", "## Data-parallel helper"
_DEVICE_HEADING: Final = re.compile(
    # ("## Replicate on the GPUs" over the cell that only wrapped the model; round 64, bl11)
    r"\breplicat\w*\s+(?:(?:the\s+)?model\s+)?(?:on|across|over|to)\s+(?:the\s+|all\s+|every\s+)?(?:\w+\s+)?gpus?\b"
    r"|\b(?:multi[- ]?gpus?|gpus?|data[- ]parallel(?:ism)?|parallel(?:ism)?|replicas?|wrapper|helper|wrap)\b",
    re.IGNORECASE,
)


# a heading over text, or over the helper, not over the code below: "### Multi-GPU notes"
_HELPER_HEADING: Final = re.compile(r"\b(?:helpers?|wrappers?|wrap\w*|workarounds?|hacks?)\b", re.IGNORECASE)
_HEADS_TEXT: Final = re.compile(
    r"\b(?:notes?|remarks?|caveats?|explanation|background|why|about|details|helpers?|wrappers?|wrap\w*)\b",
    re.IGNORECASE,
)


def _code_names(code: str) -> set[str]:
    """The names a line of code binds or reads (none where it does not parse)."""
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError):
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _article(match: re.Match[str]) -> str:
    """"The" where the match starts the text, a sentence, or a line after a heading or a blank
    line, else "the"."""
    head, _, line = match.string[:match.start()].rpartition("\n")
    if line.strip(" \t#"):  # words before it on its line
        return "The" if line.rstrip()[-1] in ".!?:" else "the"
    last = head.rstrip().rpartition("\n")[2].strip().lstrip("\"'")  # (a docstring's opening quotes)
    if "#" in line:  # a comment's line: the one above is a comment line too ("# ..."), not a heading
        last = last.lstrip("#").strip()
    elif last.startswith("#"):
        return "The"  # under a markdown heading
    return "The" if not last or last[-1] in ".!?:" else "the"


def _heading_of_stale(lines: list[str], units: list[list[int]], stale: list[bool], index: int, *,
                      named: bool = False) -> bool:
    """The heading at `units[index]` speaks of the multi-GPU set-up, and what follows it up to the
    next heading (or the cell's end) is text that all went: left alone, it would head nothing.
    `named`: the heading names something removed ("# make_parallel (kuza55 style)"), a title too."""
    heading = lines[units[index][0]].strip()
    level = len(heading) - len(heading.lstrip("#"))
    # a section's own heading ("### Multi-GPU notes"), not a title ("# Xception on the 8-GPU DGX")
    rest = _DEVICE_HEADING.sub("", heading.lstrip("#")).replace("-", " ").split()
    if not named and (level < 2 or not _DEVICE_HEADING.search(heading) or len(rest) > 2):
        return False
    following: list[bool] = []
    for unit, gone in zip(units[index + 1:], stale[index + 1:]):
        if lines[unit[0]].lstrip().startswith("#"):
            break
        if any(lines[k].strip() for k in unit):
            following.append(gone)
    return bool(following) and all(following)


def _leads_in(line: cst.EmptyLine) -> bool:
    """A comment line ending in a colon (`# first attempt:`), not a cell marker (`# In[4]:`)."""
    text = line.comment.value.rstrip() if line.comment is not None else ""
    return text.endswith(":") and not CELL_MARKER.match(text)


def _exported_heading_of_stale(units: list[list[cst.EmptyLine]], gone: list[bool], index: int) -> bool:
    """`units[index]` is a markdown heading an export wrote as a comment (`# ## Multi-GPU wrapper`)
    that `_heading_of_stale` would drop in the notebook: the lines under it in its paragraph all go."""
    unit = units[index]
    comment = unit[0].comment if len(unit) == 1 else None
    if comment is None or not re.match(r"#\s*#", comment.value):
        return False
    lines = [comment.value[1:].strip()]
    spans = [[0]]
    for later in units[index + 1:]:
        spans.append(list(range(len(lines), len(lines) + len(later))))
        lines += [_words(line.comment.value) if line.comment is not None else "" for line in later]
    return _heading_of_stale(lines, spans, [False, *gone[index + 1:]], 0)


def _plain_paragraph(lines: list[str]) -> bool:
    """Lines of running markdown text: more than one, none indented or opening a list, a quote,
    a table, code or a heading, no inline HTML."""
    return len(lines) > 1 and all(
        line.strip() and line == line.lstrip() and not line.startswith(("#", "-", "*", "+", "|", "```", ">", "<"))
        and not line[:2].rstrip(".").isdigit() and not line.rstrip("\r\n").endswith("  ")
        for line in lines
    )


def _renamed_unit(lines: list[str], prose: Prose) -> list[str]:
    """A markdown sentence's lines renamed as one text (what the sentence says on its next line
    counts: "with `make_parallel` (slices each batch" / "and concatenates the outputs on the CPU)"),
    line by line where that would change the number of lines."""
    whole = prose.renamed("".join(lines), markdown=True)
    split = whole.splitlines(keepends=True)
    if len(split) == len(lines):
        return split
    return [prose.renamed(line, markdown=True) for line in lines]


def _stale_unit(lines: list[str], unit: list[int], renamed: list[str], prose: Prose) -> bool:
    words = " ".join(line.strip().lstrip("#-*+ ") for line in renamed)
    heading = lines[unit[0]].lstrip().startswith("#")  # the notebook's structure: never dropped
    return bool(words) and not heading and prose.wholly_stale(words)


def _introduces_stale_list(lines: list[str], units: list[list[int]], stale: list[bool], index: int) -> bool:
    """The units after `index` (past blank lines) are list items, every one of them going."""
    items = 0
    for unit, gone in zip(units[index + 1:], stale[index + 1:]):
        first = lines[unit[0]].strip()
        if not first:
            if items:
                break
            continue
        if not (first.startswith(("-", "*", "+")) or first[:2].rstrip(".").isdigit()):
            break
        if not gone:
            return False
        items += 1
    return items > 0


def findings(source: str, reported: Sequence[tuple[str, str, int]], path: str) -> list[Finding]:
    """MGPU305 for each (text, name, line within the text) still naming something removed, at that
    line of `source` (a docstring's third line, not its first), quoting it."""
    lines = source.splitlines()
    used: set[int] = set()
    out: list[Finding] = []
    for text, name, offset in reported:
        own = text.splitlines() or [text]
        # the line of the text as written that names it: `offset` counts lines of the text as it
        # now reads, short of any it lost ("(Received: '')" on a docstring, round 53, ao11)
        hit = next((k for k, line in enumerate(own) if name.lower() in line.lower()), None)
        offset = hit if hit is not None else offset
        head = own[0].strip()
        start = next((k for k, line in enumerate(lines) if k not in used and head and head in line), None)
        if start is not None:
            used.add(start)
        number = (start if start is not None else 0) + offset + 1
        shown = lines[min(number - 1, len(lines) - 1)] if start is not None else own[min(offset, len(own) - 1)]
        out.append(Finding(number, 1, "MGPU305", _message(shown, name), path))
    return out


def located_in_output(found: Sequence[Finding], source: str, output: str) -> list[Finding]:
    """`found` with each MGPU305 also giving the line its text is on in the migrated file, where
    that is another line (a reader of the written file looks there). The same line, written the
    same, is looked for there: the k-th of its copies in `source` is the k-th in `output`."""
    before, after = source.splitlines(), output.splitlines()
    out: list[Finding] = []
    for finding in found:
        if finding.code != "MGPU305" or finding.cell is not None or not 0 < finding.line <= len(before):
            out.append(finding)
            continue
        line = before[finding.line - 1]
        nth = before[:finding.line - 1].count(line)
        copies = [k for k, text in enumerate(after) if text == line]
        now = copies[nth] + 1 if nth < len(copies) and line.strip() else None
        if now is None or now == finding.line or "; reword it" not in finding.message:
            out.append(finding)
            continue
        head, _, tail = finding.message.rpartition("; reword it")
        out.append(replace(finding, message=f"{head} (line {now} of the migrated file); reword it{tail}"))
    return out


def _message(text: str, name: str) -> str:
    shown = " ".join(text.split())
    shown = shown if len(shown) <= 70 else shown[:67] + "..."
    if name.lower() == "kuza55":  # the helper's author, named for it: no name the migration removed (round 48, ag04)
        what = "still describes the removed multi-GPU helper (kuza55's `make_parallel`)"
    elif re.fullmatch(r"[\w.]+", name):
        what = f"still names `{name}`, which the migration removed"
    else:  # a phrase of the old wrapper's mechanics ("the template lives on the CPU"), not a name
        what = f"still describes the removed multi-GPU wrapper ({' '.join(name.split())!r})"
    return (
        f"this prose {what} (Received: {shown!r}); "
        "reword it for tf.distribute.MirroredStrategy or delete it."
    )
