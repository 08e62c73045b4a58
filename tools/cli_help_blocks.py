"""Refresh the `clm-nb ... --help` blocks of docs/command_line.md from the commands themselves (issue 37).

    python tools/cli_help_blocks.py          # rewrite the blocks that are out of date, and say which
    python tools/cli_help_blocks.py --check  # exit 1 when a block is out of date (changes nothing)

A block is a fenced ```text block whose first line is `$ clm-nb [COMMAND ...] --help`; everything after that line is
replaced by the help click prints for that command, at the width the command line uses (`max_content_width`
110). The page's prose still has to say what a new option is for; tests/test_docs.py checks that every option of
every command is named in its command's section, and that these blocks are current.
"""
import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "command_line.md"
BLOCK = re.compile(r"^```text\n\$ clm-nb((?: [\w-]+)*) --help\n(.*?)^```$", re.M | re.S)


def help_text(path: list[str]) -> str:
    "What `clm-nb PATH... --help` prints, as a terminal of 110 columns or more shows it (click subtracts 2)."
    from click.testing import CliRunner
    from clm_nb.cli import cli
    res = CliRunner().invoke(cli, [*path, "--help"], prog_name="clm-nb", terminal_width=108)
    if res.exit_code != 0:
        raise ValueError(f"clm-nb {' '.join(path)} --help failed: {res.output}")
    return res.output


def refreshed(text: str) -> tuple[str, list[str]]:
    "`text` with every help block replaced by the current help, and the commands whose block changed."
    changed = []

    def one(m):
        path = m.group(1).split()
        new = help_text(path)
        if new != m.group(2):
            changed.append(" ".join(["clm-nb", *path]))
        return f"```text\n$ clm-nb{m.group(1)} --help\n{new}```"
    return BLOCK.sub(one, text), changed


def main(argv):
    text = DOC.read_text(encoding="utf-8")
    new, changed = refreshed(text)
    if "--check" in argv:
        if changed:
            print(f"out of date in {DOC.name}: {', '.join(changed)}; run python tools/cli_help_blocks.py")
        return 1 if changed else 0
    if changed:
        DOC.write_text(new, encoding="utf-8")
    print(f"refreshed: {', '.join(changed)}" if changed else "all help blocks are current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
