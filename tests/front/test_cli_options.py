"""The options that set a config field are declared once (front/cli/options.py): each names a
field that exists, config_of applies every one the user gave, the daemon of a background
mount gets them back, and a default a help text shows is the field's own."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.front.cli.mounting import add_mount_options, daemon_argv, option_flag
from brainfs.front.cli.options import MOUNT_OPTIONS, config_of, size_text

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
    fields = {f.name for f in dataclasses.fields(Config)}
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


def test_a_background_mount_passes_every_given_option_to_its_daemon() -> None:
    args = _args(**GIVEN)
    args.verbose, args.quiet, args.log_format = 0, 0, "text"
    argv = daemon_argv(args, CorpusURL.parse("s3://memory/p"), Path("/mnt/x"), 5,
                       Path("/tmp/log"))
    for o in MOUNT_OPTIONS:
        if o.setting:
            assert o.flags[0] in argv, o
    assert argv[argv.index("--preload-budget") + 1] == str(512 * 1024**2)
    assert option_flag("read_only") == ("--read-only", False)
    assert option_flag("commit") == ("--commit", True)
    assert option_flag("notify_fd") is None


def test_help_shows_the_defaults_of_the_config() -> None:
    by = {o.setting: o for o in MOUNT_OPTIONS}
    assert size_text(Config().preload_budget_bytes) in by["preload_budget_bytes"].kwargs["help"]
    assert f"config, {Config().commit}" in by["commit"].kwargs["help"]
    assert f"config, {Config().listing}" in by["listing"].kwargs["help"]
    assert size_text(256 * 1024**2) == "256 MiB" and size_text(1536 * 1024**2) == "1.5 GiB"
