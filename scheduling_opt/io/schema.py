"""The JSON Schema (draft 2020-12) of instance format ``scheduling-opt/v1``, shipped as data.

The schema (``instance-v1.schema.json`` beside this module) describes the
shapes, types and ranges of every section, per problem where practical, so
that tools in any language can check a file before sending it. The reader
(:func:`scheduling_opt.io.instance.load` plus the problem's own reader,
``scheduling-opt validate``) stays the authority: it also checks
cross-references the schema cannot express. See docs/instance-format.md.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: The file name of the schema inside the ``scheduling_opt.io`` package.
SCHEMA_FILE = "instance-v1.schema.json"


def load_schema() -> dict[str, Any]:
    """The instance-format v1 JSON Schema, as a dict.

    Returns
    -------
    dict
        The schema (draft 2020-12), e.g. for ``jsonschema.validate``.

    Examples
    --------
    >>> schema = load_schema()
    >>> schema["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    >>> schema["properties"]["format"]["const"]
    'scheduling-opt/v1'
    """
    text = resources.files("scheduling_opt.io").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
