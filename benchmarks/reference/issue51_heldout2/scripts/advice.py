"""How a user follows clm_nb's own messages on a CSV: drop rows with missing values (the first choice the message
offers) and drop a column the message names (too many text levels, a non-number in a numeric column). Reads nothing
but the error messages; returns the reader/prepare options and the equivalent CLI options."""
import re

def follow_advice(read, prep, path, label, tries=6):
    "read(path, label, drop_cols, missing) -> (X, y); prep(X, y, missing) -> Prepared. Returns (prepared, cli_options)."
    drop, missing = [], "refuse"
    for _ in range(tries):
        try:
            X, y = read(path, label, tuple(drop), missing)
            return prep(X, y, missing), cli_options(drop, missing)
        except ValueError as e:
            msg = str(e)
            col = re.search(r"column '([^']+)' is (?:text with|numeric, but)", msg)
            if col and "--drop-col" in msg:
                drop.append(col.group(1))
            elif "--missing drop" in msg and missing == "refuse":
                missing = "drop"
            else:
                raise
    raise ValueError(f"{path}: still refused after {tries} pieces of advice")

def cli_options(drop, missing):
    out = [] if missing == "refuse" else ["--missing", missing]
    for c in drop:
        out += ["--drop-col", c]
    return out
