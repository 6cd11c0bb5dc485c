"""`multi-gpu-compat COMMAND` (or `python -m multi_gpu_compat COMMAND`): the shim's command line."""

from __future__ import annotations

import importlib
import sys

# Each command lives in its own module with `main(argv) -> int`; imported only when chosen.
_COMMANDS = {
    "doctor": (".doctor", "report backend, support status, devices and which import paths the hook serves"),
    "unwrap": (".unwrap", "turn a legacy multi-GPU .h5 file into the plain template model"),
}


def _usage() -> str:
    lines = ["usage: multi-gpu-compat COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in _COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in _COMMANDS:
        print(f"multi-gpu-compat: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    # Each command reads its arguments first (a usage error is exit 2 with or without TensorFlow),
    # then says what to install if TensorFlow is missing (exit 1).
    module = importlib.import_module(_COMMANDS[command][0], __package__)
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
