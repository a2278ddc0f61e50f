"""Problem-file notion names and the parsers of their ``[[privacy]]`` tables.

A parser takes the table and the file's :class:`~mechdesign.privacy.declarations.Declarations`
(located at the table) and returns the notion, refusing keys it does not know. A new notion is
its module in this package, with its parser, and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable

from mechdesign.privacy.base import Notion
from mechdesign.privacy.declarations import Declarations
from mechdesign.privacy.distp import distp_from_table, profile_from_table, xdistp_from_table
from mechdesign.privacy.divergence import divergence_dp_from_table, divergence_xdp_from_table
from mechdesign.privacy.information import (
    g_vulnerability_from_table,
    information_from_table,
    min_entropy_from_table,
    mutual_information_from_table,
)
from mechdesign.privacy.ldp import ldp_from_table
from mechdesign.privacy.metric import metric_privacy_from_table
from mechdesign.privacy.shuffle import shuffle_from_table
from mechdesign.privacy.target import target_from_table

NotionParser = Callable[[dict, Declarations], Notion]

#: the ``notion = "..."`` name of a [[privacy]] table -> the parser of that table
NOTION_PARSERS: dict[str, NotionParser] = {
    "ldp": ldp_from_table,
    "metric": metric_privacy_from_table,
    "distp": distp_from_table,
    "xdistp": xdistp_from_table,
    "divergence-dp": divergence_dp_from_table,
    "divergence-xdp": divergence_xdp_from_table,
    "target": target_from_table,
    "profile": profile_from_table,
    "information": information_from_table,
    "mutual-information": mutual_information_from_table,
    "min-entropy": min_entropy_from_table,
    "g-vulnerability": g_vulnerability_from_table,
    "shuffle": shuffle_from_table,
}
