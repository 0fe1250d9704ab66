"""The options that set a config field are declared once (front/cli/options.py): each names a
field that exists, config_of applies every one the user gave, the daemon of a background
mount gets the config its parent resolved (not the flags again), and a default a help text
shows is the field's own."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from brainfs.backend.config import SECTION_OF, Config
from brainfs.backend.keys import CorpusURL
from brainfs.front.cli.mounting import add_mount_options, daemon_argv, option_flag
from brainfs.front.cli.options import (MOUNT_OPTIONS, config_of, send_resolved_config, size_text,
                                       take_resolved_config)

pytestmark = pytest.mark.unit

GIVEN = {"cache_dir": "/tmp/x-cache", "preload_budget": 512 * 1024**2, "preload_background": True,
         "allow_other": True, "read_only": True, "allow_external_links": True,
         "listing": "corpus", "commit": "quiet"}


def _args(**given: object) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_mount_options(p)
    args = p.parse_args([])
    for k, v in given.items():
        setattr(args, k, v)
    args.config = None
    return args


def test_every_option_names_a_config_field_and_config_of_applies_it(monkeypatch) -> None:
    monkeypatch.setenv("BRAINFS_CONFIG", "/dev/null")
    fields = set(SECTION_OF)
    settings = [o for o in MOUNT_OPTIONS if o.setting]
    assert {o.setting for o in settings} <= fields
    assert {o.dest for o in settings} == set(GIVEN)  # a new option must be added here too
    cfg = config_of(_args(**GIVEN))
    for o in settings:
        got = getattr(cfg, o.setting)
        assert (str(got) if o.setting == "cache_dir" else got) == GIVEN[o.dest], o
    # nothing given: the defaults stand
    plain = config_of(_args())
    assert plain.read_only is False and plain.commit == Config().commit


def test_a_background_mount_passes_its_resolved_config_not_its_flags(tmp_path: Path,
                                                                     monkeypatch) -> None:
    """The daemon's command line carries no setting: the config its parent resolved (flags
    included) reaches it through a pipe, and it takes it as it is, the file and the
    environment unread (changed since, they must not matter)."""
    toml = tmp_path / "config.toml"
    toml.write_text('recall_k = 4\n')
    monkeypatch.setenv("BRAINFS_CONFIG", str(toml))
    args = _args(**GIVEN, naive=True)
    args.config = None
    args.verbose, args.quiet, args.log_format = 0, 0, "text"
    resolved = config_of(args)
    fd = send_resolved_config(resolved)
    argv = daemon_argv(args, CorpusURL.parse("s3://memory/p"), Path("/mnt/x"), 5, Path("/tmp/log"),
                       config_fd=fd)
    for o in MOUNT_OPTIONS:
        if o.setting:
            assert o.flags[0] not in argv, o
    assert "--naive" in argv and "--config" not in argv
    assert argv[argv.index("--config-fd") + 1] == str(fd)
    # What the daemon does with it: file and environment changed meanwhile, no effect.
    toml.write_text('recall_k = 9\nread_only = false\n')
    monkeypatch.setenv("BRAINFS_STALE_DAYS", "3")
    daemon = argparse.Namespace(config=None, config_fd=fd, **{o.dest: None for o in MOUNT_OPTIONS
                                                              if o.dest != "config_fd"})
    take_resolved_config(daemon)
    got = config_of(daemon)
    assert got == resolved and got.recall_k == 4 and got.read_only is True
    assert got.stale_days == Config().stale_days and got.cache_dir == Path(GIVEN["cache_dir"])
    with pytest.raises(OSError):
        os.fstat(fd)  # read once and closed
    assert option_flag("read_only") == ("--read-only", False)
    assert option_flag("commit") == ("--commit", True)
    assert option_flag("notify_fd") is None and option_flag("config_fd") is None


def test_help_shows_the_defaults_of_the_config() -> None:
    by = {o.setting: o for o in MOUNT_OPTIONS}
    assert size_text(Config().preload_budget_bytes) in by["preload_budget_bytes"].kwargs["help"]
    assert f"config, {Config().commit}" in by["commit"].kwargs["help"]
    assert f"config, {Config().listing}" in by["listing"].kwargs["help"]
    assert size_text(256 * 1024**2) == "256 MiB" and size_text(1536 * 1024**2) == "1.5 GiB"
