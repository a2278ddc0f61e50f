"""How much memory a design needs, estimated from a problem file before anything is allocated.

A dense design over inputs X and outputs Y holds, for each of its C mechanisms (one per context),
|X|·|Y| matrix entries three times over (the program's variable, the objective's coefficients
and the solution), |X|² ground distances when a metric is declared, and two rows of |Y| entries
per pair or edge a notion lists (one per direction). At 8 bytes per float64 entry,

    bytes(X, Y) = 8 · (3 · C · |X|·|Y| + [metric] · |X|² + 2 · P · |Y|).

This is a lower bound: solvers need more (ratio constraints over all pairs of inputs are
generated on demand by the large-scale solvers, so they are not counted). A file whose lower
bound exceeds the machine's memory cannot be solved here, and is refused with the key, the size,
the memory it would take and the largest square domain the machine could hold under the rule.
"""

from __future__ import annotations

import math
import os
from decimal import Decimal

from mechdesign.core.errors import ProblemError

BYTES_PER_ENTRY = 8
COPIES = 3
RULE = ("8 bytes x (3 x contexts x |X|·|Y| matrix entries + |X|² metric distances if a metric is "
        "declared + 2 x listed pairs x |Y| notion rows)")


def machine_memory() -> int | None:
    """Physical memory in bytes (capped by a cgroup limit when one is set), or None if unknown."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit_file) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total if total > 0 else None


def design_bytes(n_in: int, n_out: int, contexts: int = 1, metric: bool = False,
                 pairs: int = 0) -> int:
    """The lower bound ``8 · (3·C·|X|·|Y| + [metric]·|X|² + 2·P·|Y|)`` in bytes (exact integers)."""
    entries = COPIES * contexts * n_in * n_out + (n_in * n_in if metric else 0) + 2 * pairs * n_out
    return BYTES_PER_ENTRY * entries


def largest_square(memory: int, contexts: int = 1, metric: bool = False, pairs: int = 0) -> int:
    """The largest n with ``design_bytes(n, n, ...) <= memory``.

    The bound is a quadratic a·n² + b·n with a = 8(3C + [metric]) and b = 16P, so n is the floor
    of its positive root, corrected by one step for round-off.
    """
    a = BYTES_PER_ENTRY * (COPIES * contexts + (1 if metric else 0))
    b = 2 * BYTES_PER_ENTRY * pairs
    n = int((-b + math.sqrt(b * b + 4 * a * memory)) / (2 * a))
    while n > 0 and design_bytes(n, n, contexts, metric, pairs) > memory:
        n -= 1
    while design_bytes(n + 1, n + 1, contexts, metric, pairs) <= memory:
        n += 1
    return n


def _count(table) -> tuple[int, str] | None:
    """(number of values, key) a domain table declares, without building it; None if malformed
    (the domain parser then says what is wrong)."""
    if not isinstance(table, dict):
        return None
    if "size" in table:
        n = _whole(table["size"])
        return (n, "size") if n is not None else None
    if "grid" in table:
        grid = table["grid"]
        if not isinstance(grid, dict):
            return None
        rows, cols = _whole(grid.get("rows")), _whole(grid.get("cols"))
        return (rows * cols, "grid") if rows is not None and cols is not None else None
    for key in ("points", "labels"):
        if isinstance(table.get(key), list):
            return len(table[key]), key
    return None


def _whole(value) -> int | None:
    """A positive whole number (``1e308`` included, as the domain parser accepts it), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if value > 0 else None


def _listed_pairs(data: dict) -> int:
    total = 0
    privacy = data.get("privacy")
    for entry in privacy if isinstance(privacy, list) else []:
        if isinstance(entry, dict):
            for key in ("pairs", "edges", "adjacency"):
                if isinstance(entry.get(key), list):
                    total += len(entry[key])
    return total


def check_design_size(data: dict, file: str | None = None, memory: int | None = None) -> None:
    """Refuse (ProblemError naming the domain's key) a problem whose lower bound on memory
    exceeds ``memory`` (default: this machine's); see the module docstring for the rule."""
    inputs = _count(data.get("inputs"))
    if inputs is None:
        return
    outputs_table = data.get("outputs")
    outputs = _count(outputs_table) if outputs_table is not None else (inputs[0], None)
    if outputs is None:
        return
    mech = data.get("mechanism")
    names = mech.get("contexts") if isinstance(mech, dict) else None
    contexts = len(names) if isinstance(names, list) and names else 1
    metric = isinstance(data.get("metric"), dict)
    pairs = _listed_pairs(data)
    known = memory if memory is not None else machine_memory()
    limit = known if known is not None else 2**40
    need = design_bytes(inputs[0], outputs[0], contexts, metric, pairs)
    if need <= limit:
        return
    side = "outputs" if outputs[1] is not None and outputs[0] > inputs[0] else "inputs"
    key = f"{side}.{(outputs if side == 'outputs' else inputs)[1]}"
    largest = largest_square(limit, contexts, metric, pairs)
    where = "this machine has" if known is not None else "assuming (memory unknown)"
    raise ProblemError(
        f"{inputs[0]:,} inputs x {outputs[0]:,} outputs need at least {_gib(need)} of memory by "
        f"the rule {RULE}; {where} {_gib(limit)}, enough for at most {largest:,} inputs x "
        f"{largest:,} outputs "
        "under this rule", file=file, key=key)


def _gib(n: int) -> str:
    if n < 2**1000:
        return f"{n / 2**30:.3g} GiB"
    return f"{Decimal(n) / 2**30:.3g} GiB"  # a float would overflow
