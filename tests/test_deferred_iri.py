"""The IRI grammar jsonschema would build at start-up is built only when an IRI is checked."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO

CHECK = """
import sys
import ctx_course
import jsonschema, nbformat
nbformat.validate(nbformat.v4.new_notebook())
print("grammar built after reading a notebook:", "lark" in sys.modules)
checker = jsonschema.FormatChecker()
print("iri:", checker.conforms("http://例子.测试/路径?q=1", "iri"), checker.conforms("http://a b", "iri"))
print("iri-reference:", checker.conforms("../路径#节", "iri-reference"), checker.conforms("a b", "iri-reference"))
print("grammar built after checking an IRI:", "lark" in sys.modules)
"""


def test_a_process_that_imports_ctx_course_builds_no_iri_grammar_until_an_iri_is_checked():
    """Reading and validating a notebook leaves the grammar unbuilt; IRIs are still checked by
    RFC 3987 (a space is not allowed in one), building it on the first check."""
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "grammar built after reading a notebook: False",
        "iri: True False",
        "iri-reference: True False",
        "grammar built after checking an IRI: True",
    ]
