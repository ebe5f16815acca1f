"""The learner operators (ctx_course/mutation/learner_operators.py): on snippets, exactly the mutants each makes.

Every mutant is made as cosmic-ray makes it (its parso tree, ``mutate_code`` with the operator and
the occurrence) and must be valid Python; a snippet where an operator must not apply gets none.
"""
from __future__ import annotations

import ast

import pytest
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator, operator_names

from ctx_course.mutation import learner_operators as lo


def mutants(operator: type, source: str) -> list[str]:
    """Return every mutant ``operator`` makes of ``source``, in cosmic-ray's order, each one valid Python."""
    count = sum(1 for node in ast_nodes(get_ast(source)) for _ in operator().mutation_positions(node))
    made = [mutate_code(source, operator(), occurrence) for occurrence in range(count)]
    for code in made:
        assert code is not None
        ast.parse(code)
    return made


def test_cosmic_ray_finds_every_learner_operator_through_the_entry_point():
    """pyproject.toml registers the provider: cosmic-ray lists learner/<name> and hands back the class."""
    for name, operator in lo.OPERATORS.items():
        assert f"learner/{name}" in operator_names()
        assert get_operator(f"learner/{name}") is operator


@pytest.mark.parametrize("operator", list(lo.OPERATORS.values()), ids=list(lo.OPERATORS))
def test_each_operators_examples_hold(operator):
    """cosmic-ray's convention: each example's code, mutated at its occurrence, is the example's result."""
    assert operator.examples()
    for example in operator.examples():
        assert mutate_code(example.pre_mutation_code, operator(), example.occurrence) == example.post_mutation_code


# ---- identity for equality -------------------------------------------------------------------


def test_equality_becomes_identity_once_per_operator():
    assert mutants(lo.EqualityToIdentity, "y = a == b != c\n") == ["y = a is b != c\n", "y = a == b is not c\n"]


def test_equality_with_a_number_true_false_or_none_is_left_alone():
    """`x is 0` is a mistake Python warns about, and on small ints CPython answers as `==` does."""
    for source in ("y = a == 0\n", "y = a != 1.5\n", "y = None == a\n", "y = a == True\n", "y = a < b\n"):
        assert mutants(lo.EqualityToIdentity, source) == [], source


def test_a_string_literal_is_compared_by_identity():
    assert mutants(lo.EqualityToIdentity, 'y = kind == "next"\n') == ["y = kind is 'next'\n"]


def test_membership_becomes_a_search_by_identity():
    assert mutants(lo.MembershipToIdentity, "y = x in seen\n") == ["y = any(_item is x for _item in seen)\n"]
    assert mutants(lo.MembershipToIdentity, "if k not in s.done: pass\n") == [
        "if not any(_item is k for _item in s.done): pass\n"]
    assert mutants(lo.MembershipToIdentity, "y = a + 1 in b\n") == ["y = any(_item is (a + 1) for _item in b)\n"]


def test_membership_in_a_string_or_a_literal_set_is_left_alone():
    """A substring or key search is not where a learner writes an identity search; nor is a `for ... in`."""
    for source in ('y = "x" in text\n', 'y = c in "abc"\n', "y = c in {1, 2}\n", "y = c in {k: 1 for k in a}\n",
                   "for x in seen: pass\n", "y = a < b in c\n"):
        assert mutants(lo.MembershipToIdentity, source) == [], source


# ---- a narrower character class or strip set -------------------------------------------------


def test_strip_and_split_without_arguments_take_the_space_alone():
    assert mutants(lo.NarrowStrip, "t = line.strip().split()\n") == [
        "t = line.strip().split(' ')\n", "t = line.strip(' ').split()\n"]
    assert mutants(lo.NarrowStrip, "t = line.rstrip()\n") == ["t = line.rstrip(' ')\n"]


def test_a_strip_with_its_own_set_is_left_alone():
    assert mutants(lo.NarrowStrip, 't = line.strip("#")\nu = line.split(",")\nv = strip()\n') == []


def test_isspace_becomes_a_comparison_with_the_space():
    assert mutants(lo.NarrowWhitespaceTest, "b = ch.isspace()\n") == ["b = ch == ' '\n"]
    assert mutants(lo.NarrowWhitespaceTest, "b = str.isspace(ch)\n") == ["b = ch == ' '\n"]
    assert mutants(lo.NarrowWhitespaceTest, "b = all(map(str.isspace, s))\n") == ["b = all(map(' '.__eq__, s))\n"]
    assert mutants(lo.NarrowWhitespaceTest, "b = ch.isdigit()\n") == []


def test_a_regular_expressions_classes_are_narrowed_one_class_at_a_time():
    source = 'P = re.compile(r"\\s*(\\w+)\\s*=\\s*(\\d+)")\n'
    assert mutants(lo.NarrowRegexClass, source) == [
        'P = re.compile(r" *(\\w+) *= *(\\d+)")\n',
        'P = re.compile(r"\\s*(\\w+)\\s*=\\s*([0-9]+)")\n',
        'P = re.compile(r"\\s*([A-Za-z0-9_]+)\\s*=\\s*(\\d+)")\n',
    ]


def test_a_class_in_a_string_that_is_not_raw_is_narrowed_too():
    assert mutants(lo.NarrowRegexClass, 'P = "\\\\s+"\n') == ['P = " +"\n']


def test_strings_without_a_class_are_left_alone():
    """`\\S` (not whitespace) is not `\\s`; a plain string has nothing to narrow."""
    assert mutants(lo.NarrowRegexClass, 'P = r"\\S+"\nQ = "hello"\nR = b"\\\\s"\n') == []


# ---- another sort key ------------------------------------------------------------------------


def test_sort_key_and_reverse_are_dropped_one_at_a_time():
    assert mutants(lo.AnotherSortKey, "y = sorted(x, key=f, reverse=True)\n") == [
        "y = sorted(x, reverse=True)\n", "y = sorted(x, key=f)\n"]
    assert mutants(lo.AnotherSortKey, "x.sort(key=len)\n") == ["x.sort()\n"]
    assert mutants(lo.AnotherSortKey, "y = max(x, key=g)\n") == ["y = max(x)\n"]


def test_a_tuple_keys_fields_are_dropped_and_its_first_two_swapped():
    assert mutants(lo.AnotherSortKey, "y = sorted(x, key=lambda r: (r.a, r.b))\n") == [
        "y = sorted(x)\n",
        "y = sorted(x, key=lambda r: (r.b,))\n",
        "y = sorted(x, key=lambda r: (r.a,))\n",
        "y = sorted(x, key=lambda r: (r.b, r.a))\n",
    ]


def test_a_sort_without_key_or_a_call_that_does_not_sort_is_left_alone():
    assert mutants(lo.AnotherSortKey, "y = sorted(x)\nz = group(x, key=f)\n") == []


# ---- a slice or range bound off by one -------------------------------------------------------


def test_a_slice_bound_moves_by_one_either_way():
    assert mutants(lo.SliceOffByOne, "y = x[i:n]\n") == [
        "y = x[i - 1:n]\n", "y = x[i + 1:n]\n", "y = x[i:n - 1]\n", "y = x[i:n + 1]\n"]


def test_a_range_bound_moves_by_one_either_way():
    assert mutants(lo.SliceOffByOne, "r = range(len(x))\n") == ["r = range(len(x) - 1)\n", "r = range(len(x) + 1)\n"]


def test_literal_bounds_and_indexes_are_left_to_core():
    """core/NumberReplacer already moves `[:3]` to `[:4]` and `[:2]`; an index is not a bound."""
    assert mutants(lo.SliceOffByOne, "y = x[:3]\nz = x[-2:]\nw = x[n]\nr = range(10)\n") == []


# ---- an alias where a copy was needed --------------------------------------------------------


def test_a_copy_of_a_named_object_becomes_the_object():
    for source in ("y = list(x)\n", "y = dict(x)\n", "y = x.copy()\n", "y = copy.deepcopy(x)\n", "y = x[:]\n",
                   "y = copy.copy(x)\n"):
        assert mutants(lo.AliasForCopy, source) == ["y = x\n"], source
    assert mutants(lo.AliasForCopy, "y = list(self.items)\n") == ["y = self.items\n"]


def test_building_a_new_object_is_not_a_copy():
    """`list(gen)` or `list(range(n))` make a value nothing else holds: no alias is possible."""
    for source in ("y = list(range(n))\n", "y = list(a for a in b)\n", "y = dict(a=1)\n", "y = list(*x)\n",
                   "y = x[1:]\n", "y = x.copy(deep=True)\n"):
        assert mutants(lo.AliasForCopy, source) == [], source


# ---- a dropped de-duplication ----------------------------------------------------------------


def test_set_and_fromkeys_keep_the_duplicates():
    assert mutants(lo.DroppedDeduplication, "y = sorted(set(x))\nz = list(dict.fromkeys(x))\n") == [
        "y = sorted(list(x))\nz = list(dict.fromkeys(x))\n", "y = sorted(set(x))\nz = list(list(x))\n"]


def test_the_seen_guard_is_dropped():
    source = "for k in x:\n    if k in seen:\n        continue\n    out.append(k)\n"
    assert mutants(lo.DroppedDeduplication, source) == [source.replace("if k in seen", "if False")]
    source = "for k in x:\n    if k not in out:\n        out.append(k)\n"
    assert mutants(lo.DroppedDeduplication, source) == [source.replace("if k not in out", "if True")]


def test_a_membership_test_that_is_not_a_guard_is_left_alone():
    """An `in` test whose body is not `continue`, one with an `else`, one inside a larger test: not a guard."""
    for source in ("if k in seen:\n    n += 1\n", "if k not in seen:\n    a()\nelse:\n    b()\n",
                   "if k not in seen and k:\n    a()\n", "y = set()\n", "y = set(a, b)\n"):
        assert mutants(lo.DroppedDeduplication, source) == [], source


# ---- rounding --------------------------------------------------------------------------------


def test_rounding_functions_are_swapped():
    assert mutants(lo.Rounding, "y = round(x, 2)\n") == ["y = round(x)\n"]
    assert mutants(lo.Rounding, "y = round(x)\n") == ["y = int(x)\n"]
    assert mutants(lo.Rounding, "y = int(x)\n") == ["y = round(x)\n"]
    assert mutants(lo.Rounding, "y = math.ceil(x)\n") == ["y = math.floor(x)\n", "y = int(x)\n"]
    assert mutants(lo.Rounding, "y = floor(x)\n") == ["y = ceil(x)\n", "y = int(x)\n"]


def test_the_ceiling_division_becomes_a_floor_or_a_rounding():
    assert mutants(lo.Rounding, "y = -(-a // b)\n") == ["y = (a // b)\n", "y = round(a / b)\n"]


def test_other_calls_and_divisions_are_left_alone():
    """`int(x, 16)` parses, `-(a // b)` is no ceiling; `//` ↔ `/` is core's."""
    assert mutants(lo.Rounding, "y = int(x, 16)\nz = -(a // b)\nw = a // b\nv = abs(x)\n") == []


@pytest.mark.heavy
def test_every_mutant_the_campaign_makes_is_valid_python_and_differs():
    """Over the lines the campaign mutates (every exercise's spans), each learner mutant parses and changes the text;
    there are as many as the last full run judged (a change of an operator needs `make mutation` again)."""
    from ctx_course.mutation.report import load_run
    from ctx_course.mutation.targets import targets

    made = 0
    for target in targets().values():
        tree = get_ast(target.source)
        for operator in lo.OPERATORS.values():
            positions = [start for node in ast_nodes(tree) for start, _ in operator().mutation_positions(node)]
            for occurrence, (line, _) in enumerate(positions):
                if any(first <= line <= last for _, first, last in target.spans):
                    code = mutate_code(target.source, operator(), occurrence)
                    assert code is not None and code != target.source
                    ast.parse(code)
                    made += 1
    judged = sum(tally[0] for run in load_run()["exercises"].values() for operator, tally in run.operators.items()
                 if operator.startswith("learner/"))
    assert made == judged > 0
