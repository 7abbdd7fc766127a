"""The `stitcher` command: parse flags, call the library, render. No logic of its own.

The package, top to bottom (a module imports only modules below it):

- boundary: `main`, the console script; every way a command ends becomes an exit status there.
- root: the command tree (`app`), the global options, each command registered in help order.
- ingest, search, collection, transfer, server, doctor, config, entities: the commands, one
  module per group; search asks the warm worker through warm_client.
- library (a Stitcher opened for a command), output (consoles, JSON, messages as shown),
  invocation (the global options of this run), options (flags many commands share), help
  (help rendering, global options anywhere), process (Ctrl-C, other packages' warnings).
"""

from stitcher.cli.boundary import main

# Names tests and scripts imported from the single-module cli; they now live where they are used.
from stitcher.cli.config import defaults_for as _defaults_for  # noqa: F401
from stitcher.cli.process import THIRD_PARTY_PACKAGES, quiet_third_parties
from stitcher.cli.root import app, versions
from stitcher.cli.root import flags_of_settings as _flags_of_settings  # noqa: F401

__all__ = ["THIRD_PARTY_PACKAGES", "app", "main", "quiet_third_parties", "versions"]
