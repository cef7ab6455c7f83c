"""Gradescope's documented ``results.json`` format as a JSON schema, written from the autograder
specification (gradescope-autograders.readthedocs.io, "Autograder Specifications": output
format, test case visibility, standard output visibility, test case status, output string
formatting, leaderboards). Undocumented extra fields are allowed, as Gradescope ignores them."""

from __future__ import annotations

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "simple_format", "html", "md", "ansi"]}

TEST = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number"},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMAT,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
}

RESULTS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array", "items": {
            "type": "object", "required": ["name", "value"],
            "properties": {"name": {"type": "string"}, "value": {"type": ["number", "string"]},
                           "order": {"enum": ["asc", "desc"]}}}},
    },
    # a score at the top level, or on every test
    "anyOf": [{"required": ["score"]},
              {"required": ["tests"],
               "properties": {"tests": {"items": {"required": ["score"]}}}}],
}

# every field the specification documents, which rnngrade fills in every results.json
TOP_FIELDS = {"score", "execution_time", "output", "output_format", "visibility",
              "stdout_visibility", "extra_data", "tests"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output",
               "output_format", "tags", "visibility", "extra_data"}
