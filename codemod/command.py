"""The same rewrite as a libcst codemod command, for `python -m libcst.tool codemod -x ...`."""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext

from .core import transform_module

__all__ = ["MigrateMultiGpuCommand"]


class MigrateMultiGpuCommand(CodemodCommand):
    """Rewrites Keras `multi_gpu_model` code into `tf.distribute.MirroredStrategy` scope code."""

    DESCRIPTION = "Rewrite Keras multi_gpu_model code into tf.distribute.MirroredStrategy scope code."
    # None declared: the core resolves what it needs once, on the module it is given
    # (declaring them here would make libcst resolve them a second time for nothing).
    METADATA_DEPENDENCIES = ()

    def __init__(self, context: CodemodContext, strategy: str = "mirrored") -> None:
        super().__init__(context)
        self.strategy = strategy

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--strategy", choices=("mirrored", "multi-worker"), default="mirrored",
            help="emit MirroredStrategy (default) or MultiWorkerMirroredStrategy code with chief-aware saving",
        )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        new, findings = transform_module(tree, self.context.filename or "<string>", strategy=self.strategy)
        for finding in findings:
            self.warn(f"{finding.line}:{finding.col}: {finding.code} {finding.message}")
        return new
