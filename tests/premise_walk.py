"""An independent reading of the premise graph of a JSON result (not
:func:`margintheory.core.premises.derive_premises`): every row names its premises, and no row is more certain than a
premise or silent about a premise's assumption."""

from __future__ import annotations

from typing import Any

from margintheory.core.premises import CITED_LEMMAS

#: lower is more certain; argued is not on the scale
RANK = {"proved": 0, "certified": 1, "float": 2}


def premise_faults(doc: dict[str, Any]) -> list[str]:
    """What is wrong with the rows of ``doc`` (a result's ``to_dict()`` / ``--json`` output): a row more certain than
    a computed premise, a premise's assumption (or the premise itself, when argued; or a cited lemma) missing from
    the row's ``assumes``, an unknown or ambiguous premise name, an assumption that no premise accounts for."""
    rows = doc["checks"]
    names = [r["name"] for r in rows]
    by_name = {r["name"]: r for r in rows}
    faults = []
    for r in rows:
        if not isinstance(r.get("premises"), list) or not isinstance(r.get("assumes"), list):
            faults.append(f"{r['name']}: no premises / assumes lists")
            continue
        owed: list[str] = []
        for name in r["premises"]:
            if names.count(name) > 1:
                faults.append(f"{r['name']}: premise {name!r} is ambiguous")
            elif name in by_name:
                prem = by_name[name]
                owed += prem["assumes"] + ([name] if prem["exactness"] == "argued" else [])
                if (r["exactness"] != "argued" and prem["exactness"] != "argued"
                        and RANK[r["exactness"]] < RANK[prem["exactness"]]):
                    faults.append(f"{r['name']}: {r['exactness']} but its premise {name!r} is {prem['exactness']}")
            elif name in CITED_LEMMAS:
                owed.append(name)
            else:
                faults.append(f"{r['name']}: premise {name!r} is neither a row nor a cited lemma")
        missing = [a for a in owed if a not in r["assumes"]]
        extra = [a for a in r["assumes"] if a not in owed]
        if missing:
            faults.append(f"{r['name']}: assumes {r['assumes']} but not {missing}")
        if extra:
            faults.append(f"{r['name']}: assumes {extra}, which no premise rests on")
    return faults
