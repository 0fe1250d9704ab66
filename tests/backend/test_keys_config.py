"""Unit tests of ``backend/keys.py`` (corpus URLs, path validation) and ``backend/config.py``
(precedence defaults < TOML < environment < override, typed coercion, credentials).

No server, no mount: everything here is pure and fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.config import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_SECRET_KEY,
    SECTION_OF,
    SECTIONS,
    Config,
    ConfigError,
)
from brainfs.backend.errors import BackendError, InvalidKey
from brainfs.backend.keys import KEY_MAX, NAME_MAX, CorpusURL, path_problem, validate_path

pytestmark = pytest.mark.unit


# ----------------------------------------------------------------------------- CorpusURL


@pytest.mark.parametrize(
    ("url", "bucket", "prefix"),
    [
        ("s3://bucket/users/a", "bucket", "users/a"),
        ("s3://bucket/users/a/", "bucket", "users/a"),  # trailing slash dropped
        ("s3://bucket//users/a", "bucket", "users/a"),  # leading slash dropped
        ("s3://bucket", "bucket", ""),
        ("s3://bucket/", "bucket", ""),
        ("s3://my.bucket-01/p", "my.bucket-01", "p"),
        ("s3://abc/x", "abc", "x"),  # 3 characters: the shortest legal name
        ("s3://" + "b" * 63 + "/x", "b" * 63, "x"),  # 63: the longest
    ],
)
def test_parse_good_urls(url: str, bucket: str, prefix: str) -> None:
    u = CorpusURL.parse(url)
    assert (u.bucket, u.prefix) == (bucket, prefix)
    # str() gives back a canonical URL that parses to the same thing.
    assert CorpusURL.parse(str(u)) == u


@pytest.mark.parametrize(
    "url",
    [
        "",
        "bucket/prefix",  # no scheme
        "s3:/bucket/p",
        "S3://bucket/p",
        "http://bucket/p",
        "s3:///p",  # empty bucket
        "s3://" + "b" * 64 + "/p",  # too long
        "s3://Bucket/p",  # upper case
        "s3://-bucket/p",  # must start with a letter or digit
        "s3://buck et/p",
        "s3://bucket/../other",  # prefix escaping
        "s3://bucket/users/../b",
        "s3://bucket/users/./a",
        "s3://bucket/users//a",  # empty segment inside the prefix
        "s3://bucket/us\x00ers",
        "s3://bucket/us\ners",
    ],
)
def test_parse_bad_urls(url: str) -> None:
    with pytest.raises(InvalidKey) as ei:
        CorpusURL.parse(url)
    # One human-readable line, as every backend error.
    assert "\n" not in str(ei.value).replace("\\n", "")
    assert str(ei.value)


@pytest.mark.parametrize("bucket", ["ab", "bucket-", "bucket.", "my_bucket"])
def test_parse_rejects_bucket_names_s3_refuses(bucket: str) -> None:
    """S3 bucket names are 3 to 63 characters, begin *and end* with a letter or digit and
    never contain '_' (AWS and MinIO refuse them). A URL naming such a bucket must fail here with a clear
    one-line reason, not later as an opaque server error."""
    with pytest.raises(InvalidKey):
        CorpusURL.parse(f"s3://{bucket}/p")


def test_key_and_path_round_trip() -> None:
    u = CorpusURL.parse("s3://bkt/users/a")
    for p in ["GUIDE.md", "knowledge/kyoto.md", "sessions/2024-05-01/transcript.md",
              "notes/ünïcödé/日本.md", "a b/c,d;e.md"]:
        k = u.key(p)
        assert k == "users/a/" + p
        assert u.path(k) == p
    # Without a prefix the key is the path.
    root = CorpusURL.parse("s3://bkt")
    assert root.key("x/y.md") == "x/y.md"
    assert root.path("x/y.md") == "x/y.md"


def test_prefix_isolation() -> None:
    """A key of users/b (or of a prefix that merely starts with the same letters) never maps
    into users/a's paths."""
    a = CorpusURL.parse("s3://bkt/users/a")
    assert a.path("users/b/GUIDE.md") is None
    assert a.path("users/ab/GUIDE.md") is None  # shares the characters, not the prefix
    assert a.path("users/a") is None  # the prefix itself is not a file of the corpus
    assert a.path("users/aGUIDE.md") is None
    assert a.path("users/GUIDE.md") is None
    assert a.path("GUIDE.md") is None
    assert a.path("users/a/GUIDE.md") == "GUIDE.md"
    b = CorpusURL.parse("s3://bkt/users/b")
    # Every key a builds is outside b, and vice versa.
    for p in ["GUIDE.md", "knowledge/x.md"]:
        assert b.path(a.key(p)) is None
        assert a.path(b.key(p)) is None


@pytest.mark.parametrize("bad", ["../users/b/GUIDE.md", "x/../../b", "/etc/passwd", "", "a//b",
                                 "./a", "a/.", "a/\x00", "a/\x1b[31m"])
def test_key_refuses_escaping_paths(bad: str) -> None:
    u = CorpusURL.parse("s3://bkt/users/a")
    with pytest.raises(InvalidKey):
        u.key(bad)


def test_full_key_never_exceeds_s3_limit() -> None:
    """S3 caps an object key at 1,024 bytes. A valid prefix plus a valid path may not add up
    to more: either parse() limits the prefix or key() refuses the path, with InvalidKey (a
    key that is too long would otherwise reach the server and fail there)."""
    prefix = "/".join(["p" * 200] * 3)  # 602 bytes: valid as a corpus path
    path = "/".join(["q" * 200] * 4)  # 803 bytes: valid as a corpus path
    try:
        u = CorpusURL.parse(f"s3://bkt/{prefix}")
    except InvalidKey:
        return  # refusing such a long prefix up front is fine too
    try:
        key = u.key(path)
    except InvalidKey:
        return
    assert len(key.encode()) <= KEY_MAX, f"key of {len(key.encode())} bytes accepted"


# ----------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty"),
        ("/abs/path.md", "absolute"),
        ("/", "absolute"),
        ("..", "'..'"),
        ("../x", "'..'"),
        ("a/../b", "'..'"),
        ("a/..", "'..'"),
        (".", "'.'"),
        ("a/./b", "'.'"),
        ("a//b", "empty path segment"),
        ("a/", "empty path segment"),
        ("a\x00b", "NUL"),
        ("a\nb", "control"),
        ("a\tb", "control"),
        ("a/\x7f", "control"),
        ("a/\x1f", "control"),
        ("x" * (NAME_MAX + 1), "255"),
        ("d/" + "é" * 128, "255"),  # 256 bytes in UTF-8 though only 128 characters
        ("/".join(["s" * 100] * 10), "too long"),  # 1,009 bytes
        ("bad\udcffname", "UTF-8"),  # a surrogate-escaped byte from a non-UTF-8 name
    ],
)
def test_path_problem_names_the_reason(path: str, reason: str) -> None:
    problem = path_problem(path)
    assert problem is not None, f"{path!r} accepted"
    assert reason in problem
    with pytest.raises(InvalidKey) as ei:
        validate_path(path)
    assert reason in str(ei.value)


@pytest.mark.parametrize("surrogate", ["\ud800", "\udbff", "\udc00", "\udc7f"])
def test_lone_surrogates_are_refused_not_crashing(surrogate: str) -> None:
    """Any lone surrogate (not only U+DC80..U+DCFF, which ``surrogateescape`` can encode)
    must be refused with InvalidKey; a UnicodeEncodeError escaping from validation would
    crash the caller (a FUSE handler) instead of giving EINVAL."""
    path = f"notes/a{surrogate}b.md"
    assert path_problem(path) is not None
    with pytest.raises(InvalidKey):
        validate_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "GUIDE.md",
        "knowledge/kyoto.md",
        "sessions/2024-05-01T10-00/transcript.md",
        ".brainfs/index.sqlite",  # valid as a path; the cache decides it is internal
        "..hidden",  # starts with dots but is not a dot segment
        "a..b",
        "...",
        "notes/日本語/メモ.md",
        "x" * NAME_MAX,
        "é" * 127,  # 254 bytes
        "/".join(["s" * 100] * 9),  # 908 bytes: long but within the limit
        "a b/c#d?e&f.md",
    ],
)
def test_valid_paths_are_accepted(path: str) -> None:
    assert path_problem(path) is None
    assert validate_path(path) == path


def test_invalid_key_is_a_backend_error() -> None:
    """Callers catch BackendError to map to errnos; InvalidKey must be one."""
    with pytest.raises(BackendError):
        validate_path("../x")


# ----------------------------------------------------------------------------- config


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with no config file and no AWS variables, plus ``extra``."""
    env = {"BRAINFS_CONFIG": "/dev/null", "HOME": str(tmp_path)}
    env.update(extra)
    return env


def test_defaults_when_nothing_is_set(tmp_path: Path) -> None:
    cfg = Config.load(env=_env(tmp_path))
    assert cfg == Config()
    assert cfg.endpoint_url is None
    assert cfg.max_attempts == 3
    assert cfg.read_timeout == 10.0
    assert "GUIDE.md" in cfg.preload_globs


def test_toml_then_env_then_override(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text(
        'endpoint_url = "http://toml:1"\n'
        "read_timeout = 7\n"  # an int in TOML for a float field
        "max_attempts = 5\n"
        "max_workers = 8\n"
        'preload_globs = ["a/*", "b.md"]\n'
        'cache_dir = "~/cachedir"\n'
        "allow_other = true\n"
    )
    env = _env(tmp_path, BRAINFS_CONFIG=str(toml))

    # TOML over defaults.
    cfg = Config.load(env=env)
    assert cfg.endpoint_url == "http://toml:1"
    assert cfg.read_timeout == 7.0 and isinstance(cfg.read_timeout, float)
    assert cfg.max_attempts == 5 and cfg.max_workers == 8
    assert cfg.preload_globs == ["a/*", "b.md"]
    assert cfg.cache_dir == Path("~/cachedir").expanduser()
    assert cfg.allow_other is True
    assert cfg.connect_timeout == Config().connect_timeout  # untouched default

    # Environment over TOML: standard AWS variables and BRAINFS_*.
    env.update({
        "AWS_ENDPOINT_URL": "http://env:2",
        "AWS_REGION": "eu-west-3",
        "BRAINFS_MAX_ATTEMPTS": "2",
        "BRAINFS_PRELOAD_GLOBS": "x/*, y.md ,",
        "BRAINFS_ALLOW_OTHER": "no",
        "BRAINFS_CACHE_BUDGET_BYTES": "1234",
    })
    cfg = Config.load(env=env)
    assert cfg.endpoint_url == "http://env:2"
    assert cfg.region == "eu-west-3"
    assert cfg.max_attempts == 2
    assert cfg.max_workers == 8  # still from TOML
    assert cfg.preload_globs == ["x/*", "y.md"]
    assert cfg.allow_other is False
    assert cfg.cache_budget_bytes == 1234

    # The S3-specific endpoint variable wins over the generic one.
    env["AWS_ENDPOINT_URL_S3"] = "http://env-s3:3"
    assert Config.load(env=env).endpoint_url == "http://env-s3:3"

    # Flags (override) over everything; None means "flag not given".
    cfg2 = Config.load(env=env).override(max_attempts=9, endpoint_url=None, read_timeout="1.5")
    assert cfg2.max_attempts == 9
    assert cfg2.endpoint_url == "http://env-s3:3"
    assert cfg2.read_timeout == 1.5
    # override() returns a copy.
    assert cfg.max_attempts == 2


def test_settings_live_in_sections_and_answer_by_name() -> None:
    """Each setting belongs to one section (``cfg.s3``, ``cfg.cache``, …) and is read and
    set by its own name too; names are unique, and none is a section's."""
    cfg = Config(read_only=True, endpoint_url="http://x:1")
    assert cfg.mount.read_only is True and cfg.read_only is True
    assert cfg.s3.endpoint_url == "http://x:1" and cfg.cache.cache_budget_bytes == cfg.cache_budget_bytes
    assert SECTION_OF["recall_k"] == "recall" and SECTION_OF["llm_model"] == "dream"
    assert not set(SECTION_OF) & set(SECTIONS)
    cfg.recall_k = 4
    assert cfg.recall.recall_k == 4
    # override() and dataclasses.replace() copy the sections: the original keeps its values.
    import dataclasses

    other = cfg.override(read_only=False)
    changed = dataclasses.replace(cfg, access_key="k")
    assert cfg.read_only is True and other.read_only is False
    assert changed.access_key == "k" and cfg.access_key is None and changed.read_only is True
    with pytest.raises(TypeError):
        Config(no_such_setting=1)


def test_toml_sections_and_flat_keys(tmp_path: Path) -> None:
    """The config file takes settings at its top (the format it always had), in their
    section's table, or both; a setting in another section's table or given twice is an
    error that names where it belongs."""
    toml = tmp_path / "c.toml"
    toml.write_text('recall_k = 4\n\n[s3]\nendpoint_url = "http://toml:1"\nmax_attempts = 5\n\n'
                    '[cache]\ncache_budget_bytes = "1G"\n\n[mount]\nread_only = true\n\n'
                    '[dream]\nllm_provider = "anthropic"\n')
    cfg = Config.load(path=toml, env=_env(tmp_path, ANTHROPIC_API_KEY="sk"))
    assert cfg.recall_k == 4 and cfg.endpoint_url == "http://toml:1" and cfg.max_attempts == 5
    assert cfg.cache_budget_bytes == 1024**3 and cfg.read_only is True
    # the provider from [dream] picks the SDK variables, as a flat llm_provider does
    assert cfg.llm_provider == "anthropic" and cfg.llm_api_key == "sk"
    # environment over a section's table, as over a flat key
    assert Config.load(path=toml, env=_env(tmp_path, BRAINFS_MAX_ATTEMPTS="2")).max_attempts == 2
    for text, words in (('[s3]\nread_only = true\n', "belongs in [mount]"),
                        ('read_only = true\n[mount]\nread_only = false\n', "given twice"),
                        ('mount = 3\n', "section"),
                        ('[mount]\nread_onyl = true\n', "did you mean 'read_only'")):
        toml.write_text(text)
        with pytest.raises(ConfigError, match="c.toml") as e:
            Config.load(path=toml, env=_env(tmp_path))
        assert words in str(e.value), (text, e.value)


def test_the_resolved_config_round_trips_as_json(tmp_path: Path) -> None:
    """What a background mount hands its daemon: every setting back as it was (a path as a
    path), and nothing else accepted."""
    cfg = Config().override(cache_dir=tmp_path / "c", endpoint_url="http://h:1", read_only=True,
                            preload_globs=["a/*"], access_key="k", secret_key="s")
    back = Config.from_json(cfg.to_json())
    assert back == cfg and isinstance(back.cache_dir, Path)
    assert Config.from_json(Config().to_json()) == Config()
    for bad in ("{", "{}", '{"version": 1}', cfg.to_json().replace('"read_only"', '"read_onyl"')):
        with pytest.raises(ConfigError, match="resolved config"):
            Config.from_json(bad)


def test_explicit_path_beats_brainfs_config(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("recall_k = 3\n")
    b.write_text("recall_k = 4\n")
    assert Config.load(path=b, env=_env(tmp_path, BRAINFS_CONFIG=str(a))).recall_k == 4
    assert Config.load(env=_env(tmp_path, BRAINFS_CONFIG=str(a))).recall_k == 3


def test_default_config_file_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    conf = tmp_path / ".config" / "brainfs" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text("stale_days = 30\n")
    assert Config.load(env={"HOME": str(tmp_path)}).stale_days == 30


@pytest.mark.parametrize(
    "text",
    [
        "read_timeout = \n",  # no value
        "endpoint_url = 'unterminated\n",
        "[s3\nendpoint_url = 'x'\n",
        "a = 1\na = 2\n",  # duplicate key
    ],
)
def test_malformed_toml_is_a_config_error(tmp_path: Path, text: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text(text)
    with pytest.raises(ConfigError) as ei:
        Config.load(path=toml, env=_env(tmp_path))
    assert str(toml) in str(ei.value)
    assert "\n" not in str(ei.value).strip()


def test_non_utf8_toml_is_a_config_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_bytes(b"endpoint_url = '\xff\xfe'\n")
    with pytest.raises(ConfigError):
        Config.load(path=toml, env=_env(tmp_path))


def test_unknown_setting_is_a_config_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("read_timeuot = 3\n")
    with pytest.raises(ConfigError, match="read_timeuot") as ei:
        Config.load(path=toml, env=_env(tmp_path))
    # names the file and the setting meant
    assert str(toml) in str(ei.value) and "did you mean 'read_timeout'" in str(ei.value)
    # a value from the environment names its variable and what the setting takes
    with pytest.raises(ConfigError) as ei:
        Config.load(env=dict(_env(tmp_path), BRAINFS_RECALL_K="abc"))
    assert "BRAINFS_RECALL_K" in str(ei.value) and "whole number" in str(ei.value), str(ei.value)
    # A table that is no section is an unknown setting too, not silently ignored (a
    # section's table is read: test_toml_sections_and_flat_keys).
    toml.write_text("[aws]\nendpoint_url = 'http://x'\n")
    with pytest.raises(ConfigError, match="aws"):
        Config.load(path=toml, env=_env(tmp_path))
    with pytest.raises(ConfigError, match="nope"):
        Config().override(nope=1)


@pytest.mark.parametrize(
    ("name", "value"),
    [("max_attempts", "three"), ("read_timeout", "fast"), ("cache_budget_bytes", "2 lots"),
     ("preload_globs", 5)],
)
def test_uncoercible_values_are_config_errors(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=name):
        Config().override(**{name: value})


def test_uncoercible_env_value_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_workers"):
        Config.load(env=_env(tmp_path, BRAINFS_MAX_WORKERS="lots"))


def test_missing_explicit_config_file_is_an_error(tmp_path: Path) -> None:
    """``brainfs --config FILE`` passes FILE as ``path``. A typo there must not silently
    fall back to the defaults (the design: bad input exits with a one-line error). Only the
    implicit default location may be absent."""
    with pytest.raises(ConfigError):
        Config.load(path=tmp_path / "typo.toml", env=_env(tmp_path))


def test_unrecognised_boolean_is_a_config_error(tmp_path: Path) -> None:
    """``BRAINFS_ALLOW_OTHER=ture`` (a typo) must not silently mean False."""
    with pytest.raises(ConfigError, match="allow_other"):
        Config.load(env=_env(tmp_path, BRAINFS_ALLOW_OTHER="ture"))


def test_credentials_default_pair_vs_users(tmp_path: Path) -> None:
    # Nothing set: the embedded server's documented default pair.
    cfg = Config.load(env=_env(tmp_path, AWS_ENDPOINT_URL="http://127.0.0.1:9000"))
    assert cfg.credentials() == (DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, None)
    # The standard AWS variables: the user's pair (and token).
    cfg = Config.load(env=_env(tmp_path, AWS_ENDPOINT_URL="http://127.0.0.1:9000",
                               AWS_ACCESS_KEY_ID="AKIAUSER", AWS_SECRET_ACCESS_KEY="usersecret",
                               AWS_SESSION_TOKEN="tok"))
    assert cfg.credentials() == ("AKIAUSER", "usersecret", "tok")
    # From the TOML file.
    toml = tmp_path / "c.toml"
    toml.write_text('access_key = "tomlkey"\nsecret_key = "tomlsecret"\n')
    cfg = Config.load(path=toml, env=_env(tmp_path))
    assert cfg.credentials() == ("tomlkey", "tomlsecret", None)


def test_env_key_pair_replaces_toml_pair_whole(tmp_path: Path) -> None:
    """Credentials are a unit: when AWS_ACCESS_KEY_ID comes from the environment, the secret
    and session token must come from there too, never be mixed with the TOML file's."""
    toml = tmp_path / "c.toml"
    toml.write_text('access_key = "tomlkey"\nsecret_key = "tomlsecret"\nsession_token = "tomltok"\n')
    cfg = Config.load(path=toml, env=_env(tmp_path, AWS_ACCESS_KEY_ID="envkey",
                                          AWS_SECRET_ACCESS_KEY="envsecret"))
    assert cfg.credentials() == ("envkey", "envsecret", None)


def test_cache_dir_for_is_per_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cfg = Config(endpoint_url="http://127.0.0.1:9000")
    a = cfg.cache_dir_for("bkt", "users/a")
    b = cfg.cache_dir_for("bkt", "users/b")
    other_endpoint = Config(endpoint_url="http://127.0.0.1:9001").cache_dir_for("bkt", "users/a")
    assert a != b and a != other_endpoint
    assert a == cfg.cache_dir_for("bkt", "users/a")  # stable
    assert a.parent == tmp_path / "xdg" / "brainfs"
    # An explicit cache_dir wins.
    assert Config(cache_dir=tmp_path / "c").cache_dir_for("bkt", "users/a") == tmp_path / "c"


# ----------------------------------------------------------------------------- issue 15


def test_missing_brainfs_config_file_is_an_error(tmp_path: Path) -> None:
    """A file named by $BRAINFS_CONFIG must exist, as one named by --config must."""
    with pytest.raises(ConfigError, match="absent.toml.*BRAINFS_CONFIG.*does not exist"):
        Config.load(env=_env(tmp_path, BRAINFS_CONFIG=str(tmp_path / "absent.toml")))
    with pytest.raises(ConfigError, match="is a directory"):
        Config.load(env=_env(tmp_path, BRAINFS_CONFIG=str(tmp_path)))
    # /dev/null or an empty value: explicitly no file.
    assert Config.load(env=_env(tmp_path, BRAINFS_CONFIG="")) == Config()
    assert Config.load(env=_env(tmp_path, BRAINFS_CONFIG="/dev/null")) == Config()


def test_xdg_config_home_is_honoured(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "brainfs").mkdir(parents=True)
    (xdg / "brainfs" / "config.toml").write_text("recall_k = 7\n")
    (tmp_path / ".config" / "brainfs").mkdir(parents=True)
    (tmp_path / ".config" / "brainfs" / "config.toml").write_text("recall_k = 5\n")
    env = {"HOME": str(tmp_path)}
    assert Config.load(env=env).recall_k == 5
    assert Config.load(env=dict(env, XDG_CONFIG_HOME=str(xdg))).recall_k == 7
    # The spec: a relative XDG_CONFIG_HOME is ignored.
    assert Config.load(env=dict(env, XDG_CONFIG_HOME="rel/xdg")).recall_k == 5
    # No file anywhere: defaults, no error.
    assert Config.load(env={"HOME": str(tmp_path / "nohome"), "XDG_CONFIG_HOME": str(tmp_path / "none")}) == Config()


@pytest.mark.parametrize(("text", "expect"), [
    ("2G", 2 * 1024**3), ("512M", 512 * 1024**2), ("1.5GiB", int(1.5 * 1024**3)),
    ("100k", 100 * 1024), ("4096", 4096), ("2GB", 2 * 10**9), ("1 MiB", 1024**2), (" 3T ", 3 * 1024**4),
    ("10B", 10), (".5G", 512 * 1024**2),
])
def test_sizes_accept_units(tmp_path: Path, text: str, expect: int) -> None:
    from brainfs.backend.config import parse_size

    assert parse_size(text) == expect
    assert Config.load(env=_env(tmp_path, BRAINFS_CACHE_BUDGET_BYTES=text)).cache_budget_bytes == expect
    toml = tmp_path / "c.toml"
    toml.write_text(f'preload_budget_bytes = "{text}"\n')
    assert Config.load(path=toml, env=_env(tmp_path)).preload_budget_bytes == expect


@pytest.mark.parametrize("text", ["2X", "G", "-1G", "1.2.3M", "2Gi", "lots"])
def test_bad_sizes_are_config_errors(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="cache_budget_bytes"):
        Config.load(env=_env(tmp_path, BRAINFS_CACHE_BUDGET_BYTES=text))


@pytest.mark.parametrize("endpoint", ["localhost:9331", "127.0.0.1:9000", "s3.example.com",
                                      "ftp://host", "http://", "http://host:port"])
def test_malformed_endpoint_is_a_config_error(tmp_path: Path, endpoint: str) -> None:
    with pytest.raises(ConfigError, match="http://"):
        Config.load(env=_env(tmp_path, AWS_ENDPOINT_URL=endpoint))


def test_good_endpoints_pass(tmp_path: Path) -> None:
    for endpoint in ("http://127.0.0.1:9000", "https://s3.eu-west-3.amazonaws.com",
                     "HTTPS://minio.local", "http://[::1]:9000/"):
        assert Config.load(env=_env(tmp_path, AWS_ENDPOINT_URL=endpoint)).endpoint_url == endpoint


def test_aws_profile_is_used_with_an_endpoint(tmp_path: Path) -> None:
    creds = tmp_path / "credentials"
    creds.write_text("[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = defsecret\n\n"
                     "[minio]\naws_access_key_id = MINIOKEY\naws_secret_access_key = miniosecret\n")
    env = _env(tmp_path, AWS_ENDPOINT_URL="http://127.0.0.1:9000", AWS_PROFILE="minio",
               AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_CONFIG_FILE=str(tmp_path / "none"))
    cfg = Config.load(env=env)
    assert cfg.profile == "minio"
    assert cfg.credentials() == ("MINIOKEY", "miniosecret", None)
    # The standard variables still win over a profile, as in every AWS tool.
    cfg = Config.load(env=dict(env, AWS_ACCESS_KEY_ID="ENVKEY", AWS_SECRET_ACCESS_KEY="envsecret"))
    assert cfg.credentials() == ("ENVKEY", "envsecret", None)
    # A profile that is not there is a one-line error naming it.
    with pytest.raises(ConfigError, match="'nope'"):
        Config.load(env=dict(env, AWS_PROFILE="nope"))



def test_the_repr_of_a_config_shows_no_secret() -> None:
    """A config printed in a log line or a traceback leaks neither the key pair's secret,
    the session token nor the model's API key; the values stay readable and travel to the
    daemon whole."""
    from brainfs.backend.config import Config

    cfg = Config(access_key="AKIDPLAIN", secret_key="s3cr3t-value", session_token="tok-value",
                 llm_api_key="sk-model-value")
    shown = repr(cfg)
    assert "AKIDPLAIN" in shown
    assert not any(v in shown for v in ("s3cr3t-value", "tok-value", "sk-model-value")), shown
    back = Config.from_json(cfg.to_json())
    assert (back.secret_key, back.session_token, back.llm_api_key) == ("s3cr3t-value", "tok-value", "sk-model-value")
