"""What every command of the ``brainfs`` command line shares: the one-line errors, the
warnings and progress bars (silenced by ``-q``), the config, opening a corpus, and the
argparse plumbing (formatter, common options, argument types)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from brainfs.backend.config import Config, parse_size
from brainfs.backend.errors import BackendError
from brainfs.backend.keys import CorpusURL, is_internal
from brainfs.front.usage import NoAnswer, UsageError  # noqa: F401 - the commands' errors

if TYPE_CHECKING:
    from brainfs.backend.store import ObjectStore

# boto3 (backend.store, backend.nearby), the search stack's embedder, tqdm and
# importlib.metadata are imported inside the helpers that use them: every command loads this
# module, and `brainfs --help` and `brainfs status` must start without them
# (tests/front/test_cli_start.py).


class FlagError(UsageError):
    """A flag's value out of its range: the command exits 2, as for argparse's own errors
    (a memory that cannot answer is a :class:`UsageError`, exit 1)."""

from .options import config_of, size_arg  # noqa: F401 - every command's config and size type

#: Set from -q: no progress bars, no warnings (errors only).
_QUIET = False


def set_quiet(quiet: bool) -> None:
    """Errors only from now on (``-q``)."""
    global _QUIET
    _QUIET = quiet


def quiet() -> bool:
    """Whether ``-q`` was given."""
    return _QUIET


def version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("brainfs")
    except PackageNotFoundError:
        return "unknown"


def warn(message: str) -> None:
    """One warning line on stderr (silenced by -q)."""
    if not _QUIET:
        print(f"brainfs: warning: {message}", file=sys.stderr, flush=True)


class _NoBar:
    """What a progress bar offers, showing nothing (tqdm's ``disable=True``, without
    importing tqdm: 0.04 s, paid by a background mount while its daemon preloads)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str):
    """A tqdm bar on a terminal, a silent stand-in otherwise (and with -q)."""
    if _QUIET or not sys.stderr.isatty():
        return _NoBar(total)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="file", leave=False)


class LazyBar:
    """A progress callback ``(done, total)`` whose bar appears at the first report (the
    total is known only then); ``close()`` is safe whether or not it appeared."""

    def __init__(self, desc: str) -> None:
        self.desc = desc
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = progress_bar(total, self.desc)
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        """Take the bar off the terminal, if it was shown."""
        if self.bar is not None:
            self.bar.close()


def open_corpus(args: argparse.Namespace) -> tuple[Config, CorpusURL, ObjectStore]:
    """Config, parsed ``args.url`` and a store checked to be reachable (one-line errors)."""
    from brainfs.backend.store import ObjectStore  # here, for start-up time: boto3 is slow to import

    cfg = config_of(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    store.check()
    return cfg, url, store


def is_empty(store: ObjectStore) -> bool:
    """True when the corpus holds no file of a memory (brainfs's own objects, such as a
    listing snapshot a mount of a mistyped prefix left, do not count)."""
    return next((o for o in store.list() if not is_internal(o.path)), None) is None


def empty_hint(url: CorpusURL, cfg: Config) -> str:
    """The hint after "holds no files": the neighbouring prefixes that do hold some
    (``backend.nearby``)."""
    from brainfs.backend.nearby import empty_hint as hint  # here, for start-up time: it needs boto3

    return hint(url, cfg)


def refuse_empty(store: ObjectStore, url: CorpusURL, cfg: Config, what: str) -> None:
    """Commands that write into a corpus refuse an empty prefix (likely a typo) before
    writing anything there."""
    if is_empty(store):
        raise UsageError(f"{url} holds no files: {what} (import a memory first: brainfs import "
                         f"DIR {url}){empty_hint(url, cfg)}")


def embedder_or_none(cfg: Config, quiet: bool = False):
    from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

    try:
        return load_embedder(cfg.recall.embedder)
    except EmbedderUnavailable as e:
        if not quiet:
            warn(f"{e}; building keyword (BM25) search only")
        return None




class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each help text (unless None/False or already in the text);
    epilogs (the examples) printed as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("%(default)" in text or "default:" in text or action.default in (None, False)
                or action.default is argparse.SUPPRESS
                or (not action.option_strings and action.nargs not in ("?", "*"))):
            return text
        return text + " (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``brainfs recall: error: … (see brainfs recall --help)``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {n})")
    return n


def common_options(defaults: bool) -> argparse.ArgumentParser:
    """The options every command accepts, before or after its name. The subcommands'
    copies default to SUPPRESS so that a value given before the command survives."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)  # noqa: E731
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("common options (before or after the command)")
    g.add_argument("-v", "--verbose", action="count", default=d(0),
                   help="more output: debug lines (in a mount's log too); -vvv adds the S3 "
                   "library's own debug lines")
    g.add_argument("-q", "--quiet", action="count", default=d(0),
                   help="errors only: no progress bars, no warnings, no log lines below ERROR")
    g.add_argument("--log-format", choices=("text", "json"), default=d("text"),
                   help="log lines as 'TIME LEVEL LOGGER: message key=value' or as one JSON "
                   "object per line")
    g.add_argument("--config", metavar="FILE", default=d(None),
                   help="TOML config file (default: $BRAINFS_CONFIG, else "
                   "$XDG_CONFIG_HOME/brainfs/config.toml, else ~/.config/brainfs/config.toml)")
    return p


URL_HELP = "the corpus: bucket and prefix (endpoint from AWS_ENDPOINT_URL)"



def command(parent: argparse._SubParsersAction, name: str, help: str, examples: list[str],
            common: argparse.ArgumentParser, **kw) -> argparse.ArgumentParser:
    """A (sub)command's parser: its help, description, examples epilog and the common options."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples) if examples else None
    desc = kw.pop("description", help[:1].upper() + help[1:] + ".")
    return parent.add_parser(name, help=help, description=textwrap.fill(desc, 88),
                             epilog=epilog, formatter_class=HelpFormatter, parents=[common], **kw)
