"""What the `stitcher` process does about its surroundings: Ctrl-C, other packages' warnings,
and how long it has run."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import warnings
from typing import Any

# What the summary's time counts from where /proc cannot say when the process started.
_IMPORTED = time.monotonic()

#: Packages whose warnings are about their own internals (a font pypdf cannot fully parse, a
#: deprecated torch call inside sentence-transformers), not about the user's data or command:
#: shown only with --verbose. stitcher's own notices are not warnings and always show.
THIRD_PARTY_PACKAGES = (
    "pypdf",
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "tokenizers",
    "torch",
    "onnxruntime",
    "docx",
    "bs4",
)


def quiet_third_parties(verbose: bool) -> None:
    """Keep other packages' warnings off stderr unless --verbose asks for them.

    Narrowly: only warnings attributed to THIRD_PARTY_PACKAGES and their loggers; anything
    else (stitcher's own, Python's) still shows. With --verbose they are logged at WARNING with
    the logger's name, so a user can tell who said it.
    """
    # tokenizers prints its fork warning from Rust, and transformers reads its verbosity once at
    # import: both only listen to the environment (set before either is imported).
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if verbose:
        logging.captureWarnings(True)
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
        for package in THIRD_PARTY_PACKAGES:  # undo an earlier quiet run in this process
            logging.getLogger(package).setLevel(logging.NOTSET)
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_VERBOSITY", "error")
    for package in THIRD_PARTY_PACKAGES:
        logging.getLogger(package).setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", module=rf"{package}(\..*)?$")


def process_seconds() -> float:
    """Seconds since this process started (Linux: from /proc, so the interpreter's start-up and
    every import count too, as cron and `time` count them); elsewhere, since cli was imported."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            # The command name (field 2) is in parentheses and may hold spaces: split after it.
            fields = stat.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic() - _IMPORTED


class InterruptWatch:
    """Remembers that SIGINT arrived, then acts as Python's default handler does."""

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None

    def install(self) -> None:
        self.seen = False
        if threading.current_thread() is not threading.main_thread():
            return
        # A process started with SIGINT ignored (`nohup`, `cmd &` in a script) keeps ignoring
        # it, as Python itself does: a stray Ctrl-C meant for the parent must not stop a load.
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return
        self._previous = signal.signal(signal.SIGINT, self._handle)

    def uninstall(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.seen = True
        raise KeyboardInterrupt
