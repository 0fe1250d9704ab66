"""One typed configuration object for every brainfs command.

Precedence, lowest first: the defaults below, a TOML file (``$BRAINFS_CONFIG``, else
``$XDG_CONFIG_HOME/brainfs/config.toml``, else ``~/.config/brainfs/config.toml``),
environment variables (``BRAINFS_*`` plus the standard ``AWS_*`` ones), then command-line
flags (applied by the CLI through :meth:`Config.override`). A file named by
``$BRAINFS_CONFIG`` or ``--config`` must exist (``/dev/null`` or an empty value: no file);
the default location is optional.

The settings come in one section per layer (:data:`SECTIONS`: ``s3``, ``cache``, ``mount``,
``recall``, ``dream``, ``sessions``). Each setting's name is unique across them, and it is
the one name the setting has: the environment variable ``BRAINFS_<NAME>``, a key of the
TOML file (at its top, the flat format, or in its section's table: ``[cache]`` then
``cache_budget_bytes = "4G"``), ``cfg.<name>`` as well as ``cfg.<section>.<name>``.

Sizes (``*_bytes`` settings) accept a number of bytes or a number with a unit: ``512M``,
``2G``, ``1.5GiB`` (K, M, G, T and KiB… are powers of 1024, KB, MB, GB, TB powers of 1000).

This lives at the bottom of the import graph (``backend``) because every layer reads it.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# botocore is imported inside _with_profile_keys, the one place that reads the AWS files:
# every command reads this module, and `brainfs status` must start without botocore (0.13 s).

#: The key pair of the embedded S3 server when the user has not set the standard AWS
#: variables. Documented in docs/USAGE.md so that ``brainfs s3 serve`` in one terminal and
#: ``brainfs mount`` in another work with no setup. It protects nothing: the server only
#: listens on loopback.
DEFAULT_ACCESS_KEY = "brainfs"
DEFAULT_SECRET_KEY = "brainfs-local-secret"


class ConfigError(ValueError):
    """A configuration value is missing or malformed (one line, shown to the user)."""


_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtp]?)(i?)(b?)\s*", re.I)
_SIZE_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(value: str | int | float) -> int:
    """A size in bytes from ``512M``, ``2G``, ``1.5GiB``, ``100KB``, ``4096`` (or a number).

    A bare unit letter and the IEC forms (``KiB``…) are powers of 1024, as in rclone,
    systemd and ``ls -h``; ``KB``, ``MB``… are powers of 1000. Raises ValueError with a
    one-line message on anything else (negative sizes included).
    """
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"a size cannot be negative (got {value})")
        return int(value)
    m = _SIZE_RE.fullmatch(str(value))
    if not m:
        raise ValueError(f"not a size: {value!r} (use a number of bytes, or e.g. 512M, 2G, 1.5GiB)")
    number, unit, iec, b = m.groups()
    unit = unit.lower()
    if iec and not (unit and b):
        raise ValueError(f"not a size: {value!r} (use a number of bytes, or e.g. 512M, 2G, 1.5GiB)")
    base = 1000 if (b and unit and not iec) else 1024
    return int(float(number) * base ** _SIZE_POWER[unit])


def _endpoint_problem(url: str) -> str | None:
    """Why ``url`` cannot be an S3 endpoint, or None."""
    if not re.match(r"^https?://", url, re.I):
        return "it needs http:// or https:// in front"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return "its port is not a number"
    if not parts.hostname:
        return "it names no host"
    return None


@dataclass
class S3Settings:
    """The object store: where it is, the key pair, and how requests behave (``backend/``)."""

    #: None means real AWS. Read from AWS_ENDPOINT_URL like every AWS tool does.
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key: str | None = None
    #: Out of the repr: a config printed in a log or a traceback shows no secret.
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    #: Connect quickly or fail: a loopback or in-region endpoint answers a TCP connect in
    #: milliseconds, so 3 s only ever trips on a dead server.
    connect_timeout: float = 3.0
    #: Time to first byte / between bytes. 10 s covers a slow S3 under load; a stalled
    #: backend must not hang a FUSE operation for longer than attempts * this.
    read_timeout: float = 10.0
    #: Total attempts per request (1 + retries) on transient errors, with jittered backoff.
    max_attempts: int = 3
    #: A named profile of ~/.aws/config and ~/.aws/credentials (AWS_PROFILE). Against AWS,
    #: boto3 reads it itself; with an endpoint (MinIO, R2, …) its key pair is used too.
    profile: str | None = None
    #: Parallel requests for batch fetches: S3 latency is per request, so preload throughput
    #: is bounded by concurrency; 32 keeps a 2,000-file preload near 1 s at 20 ms RTT
    #: without tripping S3's per-prefix rate limits.
    max_workers: int = 32
    #: A listing of more than 1,000 known files is cut into ranges of keys listed in
    #: parallel (a 20,000-file corpus: three rounds of requests instead of 20 in a row);
    #: false lists page after page, for a server whose key order is found wanting.
    list_ranges: bool = True


@dataclass
class CacheSettings:
    """The local working set: where it lives, its budget, the preload and uploads
    (``cache/local/``)."""

    #: Where the working set lives; default is per corpus under ~/.cache/brainfs.
    cache_dir: Path | None = None
    #: Local working-set budget. Clean, unpinned files beyond it are evicted (LRU).
    cache_budget_bytes: int = 2 * 1024**3
    #: Bytes fetched at mount before the filesystem is declared ready.
    preload_budget_bytes: int = 256 * 1024**2
    #: Globs (fnmatch on corpus paths) that are always preloaded, within the budget.
    preload_globs: list[str] = field(
        default_factory=lambda: [
            "GUIDE.md",
            "rules/*",
            "knowledge/*",
            "notes/*",
            "sessions/index.md",
            "sessions/*/summary.md",
        ]
    )
    #: How many of the newest session transcripts are preloaded too.
    preload_recent_transcripts: int = 20
    #: Largest single file a preload takes; bigger ones stay remote until asked for.
    preload_max_file_bytes: int = 8 * 1024**2
    #: Take the preload from the packed object ``.brainfs/preload.pack`` when it is there
    #: (one GET instead of one per file; entries whose ETag changed are fetched singly).
    preload_pack: bool = True
    #: With the pack: the mount is usable once the pack is downloaded. Its files are listed
    #: at once and written to disk while the mount serves (a read of one not written yet
    #: writes it first, from memory); creating thousands of files is what made a large
    #: mount slow. False: every file is on disk before the mount is usable.
    preload_unpack_background: bool = True
    #: Declare the mount usable at once and preload while serving (a lookup of a file not
    #: yet fetched fetches it on the spot, as for any remote file).
    preload_in_background: bool = False
    #: Seconds a write stays journaled before upload is attempted again after a failure.
    upload_retry_seconds: float = 5.0
    #: Files at least this big are uploaded in parts, streamed from the cache file: one
    #: part in memory instead of the whole file, and no 5 GiB single-PUT limit (AWS's).
    multipart_threshold_bytes: int = 64 << 20
    #: Part size of a multipart upload (S3's minimum is 5 MiB; 10,000 parts at most, so
    #: 16 MiB parts reach 156 GiB).
    multipart_part_bytes: int = 16 << 20


@dataclass
class MountSettings:
    """The mount itself: kernel caching, what it shows, when writes commit, relists, its
    log (``fs/``)."""

    #: Kernel entry/attribute cache lifetime. Only this daemon changes the tree under the
    #: mount, and it invalidates the kernel explicitly when it does, so a long timeout is
    #: safe and is what lets a second grep never call into the daemon for lookups.
    entry_timeout: float = 300.0
    attr_timeout: float = 300.0
    #: Once a mount is prepared (and again once its preload is unpacked), take every object
    #: alive out of Python's cyclic collector (``fs/heap.py``): at 20,000 files each full
    #: collection walked ~110,000 long-lived objects inside some FUSE request.
    gc_freeze: bool = True
    allow_other: bool = False
    #: FUSE no-open mode: the kernel opens files and directories without asking the daemon
    #: and keeps their pages and listings cached until the daemon invalidates them, so a
    #: warm `grep -r` costs one FLUSH round trip per file instead of OPEN and RELEASE (and
    #: none at all on a read-only mount). Needs pyfuse3 built by .ci/build-pyfuse3; with
    #: stock pyfuse3 the mount falls back to daemon opens and logs why.
    no_open: bool = True
    #: After answering a request, watch for the next one this long (µs) before sleeping:
    #: a grep's next FLUSH then finds the daemon awake (~30 instead of ~55 µs a round
    #: trip). Costs CPU only while requests stream in; off with fewer than 2 CPUs. Needs
    #: pyfuse3 built by .ci/build-pyfuse3. 0 turns it off.
    busy_poll_us: float = 50.0
    #: With commits at close, answer the FLUSH of a file with nothing to commit (every
    #: close of a file not written since its last close) in pyfuse3 itself, without
    #: entering Python. Needs pyfuse3 built by .ci/build-pyfuse3; off only to measure it.
    flush_filter: bool = True
    #: Mount read-only: writes fail with EROFS, and close(2) never waits for the daemon.
    read_only: bool = False
    #: Let the kernel follow symbolic links whose target leaves the mount (absolute, or
    #: ``..`` climbing above its root). Off: anyone who can write the bucket could plant
    #: ``notes/x -> /etc/passwd`` and read or overwrite host files through it, so such a
    #: link is listed but not followed (EPERM) and ``ln -s`` will not make one (fs/links.py).
    allow_external_links: bool = False
    #: What `ls`, `find` and `grep -r` see: "working-set" (the files on local disk, so a
    #: `grep -r` never downloads the history) or "corpus" (every file; content is fetched
    #: when read, so a `grep -r` reads the whole bucket once).
    listing: str = "working-set"
    #: no-open mode: a truncation with no close(2) after it (`truncate -s`) is committed
    #: once its file has seen no write for this long. A close commits at once (with
    #: ``commit = "quiet"``, every write is committed this long after its last change).
    commit_idle_seconds: float = 1.0
    #: When a write becomes a version to upload. "close": at every writer's close(2),
    #: which therefore waits for the daemon (one FLUSH round trip per close, a reader's
    #: too: a warm `grep -r` pays it per file). "quiet": at fsync(2), or once the file
    #: has been quiet for ``commit_idle_seconds``, or at unmount; close(2) never waits,
    #: and what was written is recorded on the cache's disk as each write(2) returns, so
    #: a killed daemon commits it at its next start. No-open mode only (daemon opens
    #: commit at close). See fs/SEMANTICS.md.
    commit: str = "close"
    #: commit = "quiet": a file written without a pause this long is committed anyway, so
    #: that a log appended every second still reaches the bucket (as a local file system
    #: writes back dirty pages after 30 s).
    commit_max_seconds: float = 30.0
    #: How often a mount lists the corpus again to see what others (dream, another mount)
    #: wrote: one paginated LIST per minute is cheap and bounds staleness to a minute.
    relist_seconds: float = 60.0
    #: A mount with an empty cache starts from the corpus's listing snapshot (one GET)
    #: instead of a paginated LIST (one round trip per 1,000 files), and takes the real LIST
    #: at once in the background; a name the snapshot lacks waits for that LIST.
    listing_snapshot: bool = True
    #: Mounts rewrite the snapshot when their LIST differs from it, at most this often: a
    #: 20,000-file corpus's snapshot is a few hundred KB, not worth writing on every change.
    listing_snapshot_seconds: float = 60.0
    #: The mount's log (CACHE_DIR/mount.log) is rotated at this size, keeping this many old
    #: files: a mount running for months keeps at most 4 MiB of log, and a day of INFO
    #: lines (a few hundred bytes per relist or recall) fits in one file.
    log_max_bytes: int = 1024**2
    log_backups: int = 3


@dataclass
class DreamSettings:
    """Dream: when a mount runs it, and the synthesizer's model (``dream/``)."""

    #: Run dream from the mount every this many seconds (0 = never; `brainfs dream` from
    #: cron or by hand does the same). The lease in the bucket keeps it to one run at once.
    dream_interval_seconds: float = 0.0
    #: Also run dream from the mount once this many sessions are new or have grown since
    #: its last run (0 = only on the schedule above): a busy day gets its wiki sooner.
    dream_after_sessions: int = 0
    #: ``deterministic`` (offline, reproducible: the default), ``llm`` (the model below) or
    #: ``agent`` (pages the user's agent wrote through MCP, dream/agentwork.py).
    #: ``brainfs dream --synth`` overrides it.
    dream_synthesizer: str = "deterministic"
    #: The protocol of the model's endpoint: ``openai`` (OpenAI and every server speaking
    #: its chat protocol: Ollama, llama.cpp, vLLM, LM Studio) or ``anthropic`` (Messages).
    #: Unset, it is ``anthropic`` when only ANTHROPIC_API_KEY is set, else ``openai``.
    llm_provider: str = "openai"
    #: The endpoint's base URL (OpenAI-compatible: ending in /v1, as OPENAI_BASE_URL does);
    #: from BRAINFS_LLM_BASE_URL, else OPENAI_BASE_URL (ANTHROPIC_BASE_URL for anthropic).
    #: Unset with a key: the provider's own API.
    llm_base_url: str | None = None
    #: From BRAINFS_LLM_API_KEY, else OPENAI_API_KEY (ANTHROPIC_API_KEY for anthropic); a
    #: local server needs none.
    llm_api_key: str | None = field(default=None, repr=False)
    llm_model: str | None = None
    #: A page is a few hundred tokens out; 60 s covers a slow local model (about 50 tokens/s
    #: for a 135M model on 2 CPUs), and a dead endpoint costs this once per worker per run
    #: (dream stops asking after the first failure).
    llm_timeout: float = 60.0
    #: 1 + the SDK's retries (exponential backoff with jitter, honouring Retry-After) on
    #: connection errors, 408, 409, 429 and 5xx.
    llm_max_attempts: int = 3
    #: A page's answer: a few sentences and up to about 15 timeline bullets fit in 600
    #: tokens; the cap bounds what a model that rambles costs.
    llm_max_output_tokens: int = 600
    #: Requests at once. Two keeps a remote API busy without tripping its rate limit at
    #: once; a local server (llama.cpp) answers one at a time, and a waiting request's time
    #: counts against its timeout: set 1 there.
    llm_concurrency: int = 2
    #: A run stops asking once it has spent this many tokens (prompt + answer) or this much
    #: money (at the prices below, per million tokens); 0 = no limit. What is left is
    #: rendered deterministically and asked next run.
    llm_max_tokens_per_run: int = 0
    llm_max_cost_per_run: float = 0.0
    llm_price_input_per_mtok: float = 0.0
    llm_price_output_per_mtok: float = 0.0


@dataclass
class SessionSettings:
    """``brainfs import-sessions`` (``cache/sessions/``)."""

    #: The names to write for a source's roles, ``"User=Nadia"`` (several: comma-separated);
    #: ``--speaker`` adds to them. Unset, "User" stays "User" in the transcripts, and dream
    #: takes it for the memory's owner (the person who speaks most in it): the import's
    #: output says so, with the ``--speaker`` that names someone else.
    import_speakers: str = ""


@dataclass
class RecallSettings:
    """Search and recall: staleness, the model, the index a mount fetches
    (``cache/search/``, ``fs/recall.py``)."""

    #: Statements likely to change (a plan, a status, a role) not confirmed for this many
    #: days are flagged stale (cache/search/staleness.py).
    stale_days: int = 180
    recall_k: int = 10
    #: Embedding model; None = the packaged all-MiniLM-L6-v2.
    embedder: str | None = None
    #: Load the model in the background once a mount is usable, so the first recall does
    #: not pay for it (~3 s of CPU and ~400 MB of memory).
    recall_warmup: bool = True
    #: A mount fetches the search index part by part (cache/search/shardmap.py). Before its
    #: first recall it fetches every part if they fit in this many bytes; otherwise the core
    #: part (wiki, cards, summaries) and the newest quarter of transcripts, then newer parts
    #: while the total fits; the rest follow in the background and the answers say which
    #: parts they searched until all are there. At 20,000 files: 103 of 655 MB first
    #: (benchmarks/results/index-shards.md).
    recall_first_index_bytes: int = 64 * 1024 * 1024
    #: What a mount's recall re-indexes of other writers' changes per listing: at most this
    #: many files and bytes (fs/recall.py). A relist that sees thousands of changes (a bulk
    #: import elsewhere) must neither fetch gigabytes nor hold the CPUs for minutes of
    #: embedding (145 chunks/s on 2 CPUs): 100 notes of a few KB are about a second of work.
    #: The rest is marked stale in answers until `brainfs index` runs.
    recall_follow_max_files: int = 100
    recall_follow_max_bytes: int = 8 * 1024 * 1024


#: The sections of a config, by the attribute (and TOML table) that holds each. A setting's
#: name is unique across them, so it is also its name on its own: ``cfg.cache_budget_bytes``
#: (read through its section), ``BRAINFS_CACHE_BUDGET_BYTES``, a flat TOML key, ``-o``.
SECTIONS: dict[str, type] = {
    "s3": S3Settings,
    "cache": CacheSettings,
    "mount": MountSettings,
    "recall": RecallSettings,
    "dream": DreamSettings,
    "sessions": SessionSettings,
}

#: Each setting's section: ``{"endpoint_url": "s3", …}``.
SECTION_OF: dict[str, str] = {
    f.name: section for section, cls in SECTIONS.items() for f in dataclasses.fields(cls)
}


def setting_fields() -> dict[str, dataclasses.Field]:
    """Every setting's dataclass field (its default, its type), by its name."""
    return {f.name: f for cls in SECTIONS.values() for f in dataclasses.fields(cls)}


@dataclass(init=False)
class Config:
    """Every tunable of brainfs, in one section per layer, with the reason for its default.

    ``cfg.s3``, ``cfg.cache``, ``cfg.mount``, ``cfg.recall``, ``cfg.dream`` and
    ``cfg.sessions`` hold the settings; each setting is also readable (and settable) by its
    own name, ``cfg.read_only``, through its section, as it was before the sections.
    ``Config(read_only=True)`` sets settings by name as well.
    """

    s3: S3Settings
    cache: CacheSettings
    mount: MountSettings
    recall: RecallSettings
    dream: DreamSettings
    sessions: SessionSettings

    def __init__(self, s3: S3Settings | None = None, cache: CacheSettings | None = None,
                 mount: MountSettings | None = None, recall: RecallSettings | None = None,
                 dream: DreamSettings | None = None, sessions: SessionSettings | None = None,
                 **settings: Any) -> None:
        given = {"s3": s3, "cache": cache, "mount": mount, "recall": recall, "dream": dream,
                 "sessions": sessions}
        for name, cls in SECTIONS.items():
            # A copy: ``dataclasses.replace(cfg, …)`` passes the original's sections, and
            # the copy must not change them.
            section = given[name]
            setattr(self, name, dataclasses.replace(section) if section is not None else cls())
        for name, value in settings.items():
            if name not in SECTION_OF:
                raise TypeError(f"Config() got an unexpected setting {name!r}")
            setattr(getattr(self, SECTION_OF[name]), name, value)

    # ------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path | None = None, env: dict[str, str] | None = None) -> "Config":
        """Defaults, then the TOML file, then the environment."""
        env = dict(os.environ if env is None else env)
        cfg = cls()
        data: dict[str, Any] = {}
        toml_path = config_path(path, env)
        if toml_path is not None:
            try:
                raw = tomllib.loads(toml_path.read_text())
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise ConfigError(f"{toml_path}: not valid TOML: {e}") from None
            except OSError as e:
                raise ConfigError(f"config file {toml_path}: {e.strerror or e}") from None
            try:
                data = _flat_toml(raw)
                cfg = cfg.override(**data)
            except ConfigError as e:
                raise ConfigError(f"{toml_path}: {e}") from None
        overrides: dict[str, Any] = {}
        if env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"):
            overrides["endpoint_url"] = env.get("AWS_ENDPOINT_URL_S3") or env["AWS_ENDPOINT_URL"]
        if env.get("AWS_PROFILE"):
            overrides["profile"] = env["AWS_PROFILE"]
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if region:
            overrides["region"] = region
        # The SDKs' own variables count as environment (above the TOML file), below
        # brainfs's own names: OPENAI_* for an OpenAI-compatible endpoint, ANTHROPIC_* for
        # Anthropic's (the provider unset and only ANTHROPIC_API_KEY set: anthropic).
        provider = env.get("BRAINFS_LLM_PROVIDER") or data.get("llm_provider")
        if not provider and env.get("ANTHROPIC_API_KEY") and not (
                env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL")):
            provider = overrides["llm_provider"] = "anthropic"
        sdk = "ANTHROPIC" if provider == "anthropic" else "OPENAI"
        for name, key in (("llm_base_url", f"{sdk}_BASE_URL"), ("llm_api_key", f"{sdk}_API_KEY")):
            if env.get(key):
                overrides[name] = env[key]
        cfg = cfg.override(**overrides)
        for name in SECTION_OF:
            key = "BRAINFS_" + name.upper()
            if key in env:
                try:
                    cfg = cfg.override(**{name: env[key]})
                except ConfigError as e:
                    raise ConfigError(f"environment variable {key}: {e}") from None
        if env.get("AWS_ACCESS_KEY_ID"):
            # A key pair comes whole from one source: never pair the environment's key id
            # with a secret or token from the file.
            cfg = cfg.replace(
                access_key=env["AWS_ACCESS_KEY_ID"],
                secret_key=env.get("AWS_SECRET_ACCESS_KEY"),
                session_token=env.get("AWS_SESSION_TOKEN"),
            )
        elif cfg.profile and cfg.endpoint_url and not cfg.access_key:
            cfg = _with_profile_keys(cfg, env)
        return cfg

    def replace(self, **values: Any) -> "Config":
        """A copy with settings set by name, as given (no coercion, None included)."""
        return Config(**{name: getattr(self, name) for name in SECTIONS}, **values)

    def override(self, **values: Any) -> "Config":
        """A copy with ``values`` applied (None values are ignored), coerced to field types."""
        out = self.replace()
        for name, value in values.items():
            if value is None:
                continue
            if name not in SECTION_OF:
                close = difflib.get_close_matches(name, SECTION_OF, n=1)
                raise ConfigError(f"unknown setting {name!r}"
                                  + (f" (did you mean {close[0]!r}?)" if close else ""))
            setattr(out, name, _coerce(name, value))
        if out.endpoint_url is not None:
            out.endpoint_url = out.endpoint_url.strip() or None
        if out.endpoint_url is not None:
            problem = _endpoint_problem(out.endpoint_url)
            if problem:
                raise ConfigError(f"the S3 endpoint {out.endpoint_url!r} (AWS_ENDPOINT_URL or "
                                  f"endpoint_url) is not a URL: {problem}, e.g. "
                                  f"http://{out.endpoint_url.split('://')[-1]}")
        if out.listing not in ("working-set", "corpus"):
            raise ConfigError(f"listing must be 'working-set' or 'corpus', not {out.listing!r}")
        if out.commit not in ("close", "quiet"):
            raise ConfigError(f"commit must be 'close' or 'quiet', not {out.commit!r}")
        if out.llm_provider not in ("openai", "anthropic"):
            raise ConfigError(f"llm_provider must be 'openai' or 'anthropic', not {out.llm_provider!r}")
        return out

    def settings(self) -> dict[str, Any]:
        """Every setting's value by its name (flat, in the sections' order)."""
        return {name: getattr(self, name) for name in SECTION_OF}

    def to_json(self) -> str:
        """The resolved config as JSON, by section: what a background mount hands its
        daemon (:meth:`from_json`), so that the daemon runs with exactly what its parent
        resolved instead of resolving file, environment and flags again. Holds the secrets
        (key pair, LLM key): for a pipe or a file only its owner reads, never a log."""
        return json.dumps({"version": _JSON_VERSION, **{
            name: {k: (str(v) if isinstance(v, Path) else v)
                   for k, v in dataclasses.asdict(getattr(self, name)).items()}
            for name in SECTIONS}})

    @classmethod
    def from_json(cls, text: str) -> "Config":
        """The config :meth:`to_json` wrote, as it was: no file, environment or default is
        consulted, a setting missing or unknown is an error (parent and daemon run the same
        code, so either means something else wrote it)."""
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ConfigError(f"resolved config: not JSON: {e}") from None
        if not isinstance(data, dict) or data.get("version") != _JSON_VERSION:
            raise ConfigError(f"resolved config: not version {_JSON_VERSION} of brainfs's config")
        types_ = _field_types()
        sections = {}
        for name, section_cls in SECTIONS.items():
            values = data.get(name)
            want = {f.name for f in dataclasses.fields(section_cls)}
            if not isinstance(values, dict) or set(values) != want:
                raise ConfigError(f"resolved config: section {name!r} does not hold its settings")
            sections[name] = section_cls(**{
                k: Path(v) if v is not None and types_[k] is Path else v for k, v in values.items()})
        return cls(**sections)

    def credentials(self) -> tuple[str, str, str | None]:
        """The key pair to use: the user's, or the embedded server's documented default.

        Against real AWS with no key set, the store ignores this and lets boto3's own
        credential chain (profiles, instance roles) apply.
        """
        if self.access_key:
            return self.access_key, self.secret_key or "", self.session_token
        return DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, None

    def cache_dir_for(self, bucket: str, prefix: str) -> Path:
        """The cache directory of one corpus (one per endpoint, bucket and prefix)."""
        if self.cache_dir is not None:
            return Path(self.cache_dir)
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "brainfs"
        ident = f"{self.endpoint_url or 'aws'}|{bucket}|{prefix}".encode()
        return base / hashlib.sha256(ident).hexdigest()[:16]


def _flat_property(name: str, section: str) -> property:
    """``cfg.NAME`` read and set in ``cfg.SECTION``."""

    def get(self: Config) -> Any:
        return getattr(getattr(self, section), name)

    def set_(self: Config, value: Any) -> None:
        setattr(getattr(self, section), name, value)

    return property(get, set_, doc=f"``{section}.{name}``")


for _name, _section in SECTION_OF.items():
    setattr(Config, _name, _flat_property(_name, _section))
del _name, _section

#: The format of :meth:`Config.to_json`; parent and daemon are the same install.
_JSON_VERSION = 1


def _flat_toml(data: dict[str, Any]) -> dict[str, Any]:
    """A config file's settings by name. Settings may stand at the top (``read_only =
    true``, the format since the first release) or in their section's table (``[mount]``
    then ``read_only = true``), or both; a setting given twice, or in another section's
    table, is an error."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in SECTIONS:
            out[key] = value  # a flat setting (an unknown one is reported by override)
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"[{key}] is a section of settings, not a setting")
        for name, v in value.items():
            if name in SECTION_OF and SECTION_OF[name] != key:
                raise ConfigError(f"setting {name!r} belongs in [{SECTION_OF[name]}], not [{key}]")
            if name in out or name in data:
                raise ConfigError(f"setting {name!r} is given twice (at the top and in [{key}])")
            out[name] = v
    return out


def config_path(path: Path | None, env: dict[str, str]) -> Path | None:
    """The TOML file to read: ``path`` (--config) or ``$BRAINFS_CONFIG``, which must exist,
    else the default location when it exists. ``/dev/null`` or an empty BRAINFS_CONFIG
    means no file."""
    named = path if path is not None else env.get("BRAINFS_CONFIG")
    if named is not None:
        source = "--config" if path is not None else "BRAINFS_CONFIG"
        if str(named).strip() in ("", os.devnull):
            return None
        p = Path(named).expanduser()
        if not p.exists():
            raise ConfigError(f"config file {p} ({source}) does not exist")
        if p.is_dir():
            raise ConfigError(f"config file {p} ({source}) is a directory")
        return p
    home = Path(env.get("HOME") or Path.home())
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME", "").startswith("/") else home / ".config"
    default = base / "brainfs" / "config.toml"
    return default if default.is_file() else None


def _with_profile_keys(cfg: Config, env: dict[str, str]) -> Config:
    """The key pair of ``cfg.profile`` from the shared AWS files (an endpoint is set, so
    the store is given explicit keys and would otherwise use the embedded default)."""
    import botocore.exceptions
    import botocore.session

    session = botocore.session.Session(profile=cfg.profile)
    for var, name in (("credentials_file", "AWS_SHARED_CREDENTIALS_FILE"),
                      ("config_file", "AWS_CONFIG_FILE")):
        if env.get(name):
            session.set_config_variable(var, env[name])
    try:
        creds = session.get_credentials()
    except botocore.exceptions.ProfileNotFound:
        raise ConfigError(f"AWS profile {cfg.profile!r} (AWS_PROFILE) is not in ~/.aws/config "
                          "or ~/.aws/credentials") from None
    except botocore.exceptions.BotoCoreError as e:
        raise ConfigError(f"AWS profile {cfg.profile!r}: {e}") from None
    if creds is None:
        raise ConfigError(f"AWS profile {cfg.profile!r} (AWS_PROFILE) has no key pair")
    frozen = creds.get_frozen_credentials()
    return cfg.replace(access_key=frozen.access_key, secret_key=frozen.secret_key,
                       session_token=frozen.token)


def _field_types() -> dict[str, type]:
    """Each setting's type with ``| None`` taken off (``str | None`` → ``str``), resolved
    from the annotations (they are strings under ``from __future__ import annotations``)."""
    global _TYPES
    if _TYPES is None:
        out: dict[str, type] = {}
        hints = {k: v for cls in SECTIONS.values() for k, v in typing.get_type_hints(cls).items()}
        for name, hint in hints.items():
            args = [a for a in typing.get_args(hint) if a is not type(None)]
            if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
                hint = args[0]
            out[name] = hint
        _TYPES = out
    return _TYPES


_TYPES: dict[str, type] | None = None
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _coerce(name: str, value: Any) -> Any:
    """``value`` (from TOML, the environment or a flag) as the setting's type."""
    t = _field_types().get(name, str)
    try:
        if t is int and name.endswith("_bytes"):
            return parse_size(value)
        if typing.get_origin(t) is list:
            if isinstance(value, str):  # BRAINFS_PRELOAD_GLOBS="a/*, b.md"
                return [v.strip() for v in value.split(",") if v.strip()]
            return [str(v) for v in value]
        if t is Path:
            return Path(value).expanduser()
        if t is bool:
            if isinstance(value, str):
                word = value.strip().lower()
                if word in _TRUE | _FALSE:
                    return word in _TRUE
                raise ValueError(word)
            return bool(value)
        if t is int:
            return int(value)
        if t is float:
            return float(value)
        return str(value)
    except (TypeError, ValueError) as e:
        detail = f": {e}" if name.endswith("_bytes") else _EXPECTED.get(t, "")
        raise ConfigError(f"setting {name}: cannot use {value!r}{detail}") from None


#: What a setting of each type takes, for the error about a value it cannot use.
_EXPECTED: dict[Any, str] = {int: " (expected a whole number)", float: " (expected a number)",
                             bool: " (expected true or false)"}
