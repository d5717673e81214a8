"""The audit's single self-contained HTML page: counts, the worst files with their
pictures inlined as ``data:`` URIs (the page can be mailed or attached to a ticket
alone), every file in one table, and the files that could not be inspected."""

from __future__ import annotations

import base64
import html
import os

from .records import counts, worst_first

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.7em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }
figure img { max-width: 640px; border: 1px solid #ccc; }
.bad { color: #c92a2a; }
"""


def _data_uri(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _row(r: dict) -> str:
    e = html.escape
    cells = [
        f"<td>{e(r['relative'])}</td>",
        f"<td>{e(r.get('saved_by') or '')}</td>",
        f"<td class=n>{r.get('nodes', '')}</td>",
        f"<td class=n>{r.get('instances', '')}</td>",
        f"<td class=n>{r.get('flagged', '')}</td>",
        f"<td>{e(r.get('worst_node') or '')}</td>",
        f"<td class=n>{r.get('worst_shear_deg', 0.0):.2f}</td>",
        f"<td class=n>{r.get('worst_corner', 0.0):.3g}</td>",
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _failures(c: dict) -> str:
    """``0 unreadable, 0 timed out, 1 crashed`` with only the counts over 0 in red."""
    parts = [(c["error"], "unreadable"), (c["timeout"], "timed out"), (c["crash"], "crashed")]
    return ", ".join(f"<span class=bad>{n} {what}</span>" if n else f"{n} {what}" for n, what in parts)


def audit_html(records: list[dict], out_dir: str, pictures: int = 12, title: str = "Hierarchy audit") -> str:
    """The page as a string. ``records``: the latest record per file; pictures are read
    from ``out_dir`` (records' ``picture`` paths are relative to it) for the ``pictures``
    worst files."""
    e = html.escape
    c = counts(records)
    ranked = worst_first(records)
    parts = [
        "<!doctype html><html><head><meta charset=utf-8>",
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p>{c['files']} files: {c['ok']} inspected, <b>{c['flagged_files']}</b> with flagged nodes; "
        f"{_failures(c)}.</p>",
    ]
    figures = []
    for r in ranked[:pictures]:
        uri = _data_uri(os.path.join(out_dir, r["picture"])) if r.get("picture") else None
        if uri:
            caption = (
                f"{e(r['relative'])}: {e(r.get('worst_node') or '')}, shear {r.get('worst_shear_deg', 0.0):.1f} deg"
            )
            figures.append(f"<figure><img alt='{caption}' src='{uri}'><figcaption>{caption}</figcaption></figure>")
    if figures:
        parts += ["<h2>Worst files</h2>", *figures]
    head = "".join(
        f"<th>{h}</th>"
        for h in ("file", "saved by", "nodes", "instances", "flagged", "worst node", "shear (deg)", "corner (units)")
    )
    parts += ["<h2>All inspected files, worst first</h2>", f"<table><tr>{head}</tr>"]
    parts += [_row(r) for r in ranked]
    parts.append("</table>")
    failed = [r for r in records if r.get("status") != "ok"]
    if failed:
        parts += ["<h2>Not inspected</h2><table><tr><th>file</th><th>status</th><th>message</th></tr>"]
        parts += [
            f"<tr><td>{e(r['relative'])}</td><td class=bad>{e(r.get('status', ''))}</td>"
            f"<td>{e(r.get('message') or '')}</td></tr>"
            for r in failed
        ]
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
