"""Sphinx extension of the book's site: a numbered reference reads its target page once per build.

Sphinx's standard domain resolves each ``{numref}`` by unpickling the target page's whole
doctree (``env.get_doctree``) only to read the target node's type and id. The book's numbered
references point into its chapter pages, the largest doctrees of the site, so one site build
unpickled the same pages again and again (about 1.7 s of a 9 s build). This domain keeps each
page's doctree, unpickled once, for the rest of the build's reference resolution; the reference
itself is resolved by Sphinx's own code, which reads the doctree and never changes it.
"""

from __future__ import annotations

from typing import Any

from sphinx.domains.std import StandardDomain


class NumrefOnceDomain(StandardDomain):
    """Sphinx's ``std`` domain, with each numbered reference's target doctree read once per builder."""

    def _resolve_numref_xref(self, env: Any, fromdocname: str, builder: Any, *args: Any) -> Any:
        doctrees: dict[str, Any] = builder.__dict__.setdefault("_forgetting_numref_doctrees", {})
        read = env.get_doctree

        def read_once(docname: str) -> Any:
            if docname not in doctrees:
                doctrees[docname] = read(docname)
            return doctrees[docname]

        env.get_doctree = read_once  # an instance attribute, removed again below
        try:
            return super()._resolve_numref_xref(env, fromdocname, builder, *args)
        finally:
            del env.get_doctree


def setup(app: Any) -> dict[str, Any]:
    """Register the domain in place of ``std``."""
    app.add_domain(NumrefOnceDomain, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
