"""Mutation operators modelled on learners' mistakes, as a cosmic-ray operator provider (``learner/...``).

Covers: the mistakes a learner makes that cosmic-ray's core operators (which swap operators and
constants) do not: identity for equality (``==`` → ``is``, ``in`` → a search by identity), a
narrower character class or strip set (``.strip()`` → ``.strip(" ")``, ``\\s`` → a space,
``.isspace()`` → ``== " "``), another sort key (``key=``/``reverse=`` dropped, a field of a tuple key
dropped or two swapped), a slice or ``range`` bound off by one, an alias where a copy was needed
(``list(x)``, ``x.copy()``, ``copy.deepcopy(x)``, ``x[:]`` → ``x``), a dropped de-duplication
(``set(x)`` and ``dict.fromkeys(x)`` → ``list(x)``, ``if k in seen: continue`` without its test), and
rounding (``round(x, n)`` → ``round(x)``, ``round`` ↔ ``int``, ``ceil`` ↔ ``floor`` ↔ ``int``).
cosmic-ray finds providers through the ``cosmic_ray.operator_providers`` entry point group;
pyproject.toml registers ``LearnerOperators`` there under the name ``learner``, so every session
(``make mutation``) runs these beside the core operators.

Each operator looks at one kind of parso node (cosmic-ray's tree) and, where it applies, reads the
node's text with the standard library's ``ast``, rewrites it and writes it back with
``ast.unparse``: the mutated node is a single leaf holding the new text, so the rest of the file is
untouched. A rewrite is kept only when it parses.

Leaves out: what core already does: ``<`` ↔ ``<=``, ``//`` ↔ ``/``, and ±1 on a number literal
(so a slice or ``range`` bound that is a literal number is left to core's ``NumberReplacer``);
comparisons with a number, ``True``, ``False`` or ``None`` (``x is 0`` is a mistake Python itself
warns about, and on small integers CPython answers as ``==`` does); membership in a string or a
literal set or dict (substring or key search, where identity is not what a learner would write).

Vocabulary: a *rewrite* is one mutated text of a node; an operator's *positions* on a node are
its rewrites, in order, and cosmic-ray's *occurrence* counts them over the file.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

import parso.python.tree
from cosmic_ray.operators.operator import Example, Operator

# The parso node types whose text is an expression these operators rewrite.
_CHAINS = ("atom_expr",)  # a name or an atom followed by calls, subscripts and attributes
_COMPARISONS = ("comparison",)
_STRINGS = ("string",)
_LOOP_VAR = "_item"  # the variable of the generator an identity search is written with


def _parsed(code: str) -> ast.expr | None:
    """Return the expression of ``code`` (a node's text, possibly over several lines), or None."""
    try:
        return ast.parse(f"(\n{code}\n)", mode="eval").body
    except SyntaxError:
        return None


def _valid(code: str) -> bool:
    return _parsed(code) is not None


def _chain(expr: ast.expr) -> Iterator[ast.expr]:
    """Yield the calls, subscripts and attributes of a chain (``a.b(c)[d]``), outside in, not their arguments."""
    while isinstance(expr, (ast.Call, ast.Subscript, ast.Attribute)):
        yield expr
        expr = expr.func if isinstance(expr, ast.Call) else expr.value


def _is_literal_scalar(expr: ast.expr) -> bool:
    scalar = (bool, int, float, complex)
    return isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, scalar))


def _called(expr: ast.expr) -> str:
    """Return the dotted name a call calls (``math.ceil``, ``sorted``, ``.strip`` for a method), or ''."""
    if not isinstance(expr, ast.Call):
        return ""
    func = expr.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id in ("math", "copy", "dict", "str"):
            return f"{func.value.id}.{func.attr}"
        return f".{func.attr}"
    return ""


def _only_positional(call: ast.Call, count: int) -> bool:
    return (len(call.args) == count and not call.keywords
            and not any(isinstance(arg, ast.Starred) for arg in call.args))


class _Rewriter(Operator):
    """An operator whose mutations of a node are the texts ``rewrites`` returns for it."""

    #: parso node types this operator looks at
    node_types: tuple[str, ...] = ()

    def rewrites(self, node) -> list[str]:
        """Return the mutated texts of ``node`` (without its prefix); [] where the operator does not apply."""
        if node.type not in self.node_types:
            return []
        code = node.get_code(include_prefix=False)
        expr = _parsed(code)
        if expr is None:
            return []
        return [text for text in self.rewrite(expr, node) if _valid(text)]

    def rewrite(self, expr: ast.expr, node) -> list[str]:
        raise NotImplementedError

    def mutation_positions(self, node):
        for _ in self.rewrites(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        text = self.rewrites(node)[index]
        return parso.python.tree.Name(text, node.start_pos, prefix=node.get_first_leaf().prefix)

    @classmethod
    def examples(cls):
        return ()


def _chain_rewrites(expr: ast.expr, rule: Callable[[ast.expr], list[ast.expr]]) -> list[str]:
    """Return the whole chain's text once for each replacement ``rule`` gives for one of its links."""
    texts = []
    for link in list(_chain(expr)):
        for replacement in rule(link):
            texts.append(_replaced(expr, link, replacement))
    return texts


def _replaced(root: ast.expr, old: ast.expr, new: ast.expr) -> str:
    """Return the text of ``root`` with its sub-expression ``old`` replaced by ``new`` (``root`` unchanged)."""
    return ast.unparse(_copy_replacing(root, old, new))


def _copy_replacing(node: ast.AST, old: ast.AST, new: ast.AST) -> ast.AST:
    """Return a copy of the tree ``node`` in which the node ``old`` is replaced by ``new``."""
    if node is old:
        return new
    fields: dict[str, object] = {}
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            fields[name] = [_copy_replacing(v, old, new) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            fields[name] = _copy_replacing(value, old, new)
        else:
            fields[name] = value
    return type(node)(**fields)


def _plus(expr: ast.expr, delta: int) -> ast.expr:
    op = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(left=expr, op=op, right=ast.Constant(abs(delta)))


# ---- identity for equality -------------------------------------------------------------------


class EqualityToIdentity(_Rewriter):
    """``a == b`` → ``a is b`` and ``a != b`` → ``a is not b``: the object, not its value (one per operator)."""

    node_types = _COMPARISONS

    def rewrite(self, expr, node):
        if not isinstance(expr, ast.Compare):
            return []
        operands = [expr.left, *expr.comparators]
        texts = []
        for index, op in enumerate(expr.ops):
            if not isinstance(op, (ast.Eq, ast.NotEq)):
                continue
            if _is_literal_scalar(operands[index]) or _is_literal_scalar(operands[index + 1]):
                continue
            ops = list(expr.ops)
            ops[index] = ast.Is() if isinstance(op, ast.Eq) else ast.IsNot()
            texts.append(ast.unparse(ast.Compare(left=expr.left, ops=ops, comparators=expr.comparators)))
        return texts

    @classmethod
    def examples(cls):
        return (Example("x = a == b", "x = a is b"), Example("x = a != b", "x = a is not b"))


def _identity_search(needle: ast.expr, haystack: ast.expr) -> str:
    """Return ``any(_item is needle for _item in haystack)``, as a learner would write it."""
    return f"any({_LOOP_VAR} is {_operand(needle)} for {_LOOP_VAR} in {_operand(haystack)})"


def _operand(expr: ast.expr) -> str:
    """Return the text of ``expr``, in parentheses unless it is a name, attribute, subscript, call or literal."""
    text = ast.unparse(expr)
    simple = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant, ast.List, ast.Tuple)
    return text if isinstance(expr, simple) else f"({text})"


def _not_a_collection_search(expr: ast.expr) -> bool:
    """Whether ``expr`` is a string, a literal set or dict or a comprehension of one: no identity search there."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes)):
        return True
    return isinstance(expr, (ast.JoinedStr, ast.Set, ast.Dict, ast.SetComp, ast.DictComp))


class MembershipToIdentity(_Rewriter):
    """``x in items`` → ``any(_item is x for _item in items)`` (and ``not in`` → ``not any(...)``).

    Only a comparison with one operator, and not where either side is a string or the right side a
    literal set or dict (a substring or key search, where identity is not what a learner writes).
    """

    node_types = _COMPARISONS

    def rewrite(self, expr, node):
        if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.In, ast.NotIn))):
            return []
        needle, haystack = expr.left, expr.comparators[0]
        if _not_a_collection_search(needle) or _not_a_collection_search(haystack):
            return []
        text = _identity_search(needle, haystack)
        return ["not " + text if isinstance(expr.ops[0], ast.NotIn) else text]

    @classmethod
    def examples(cls):
        return (Example("y = x in seen", "y = any(_item is x for _item in seen)"),
                Example("y = x not in seen", "y = not any(_item is x for _item in seen)"))


# ---- a narrower character class or strip set -------------------------------------------------

_STRIPPERS = ("strip", "lstrip", "rstrip", "split", "rsplit")


class NarrowStrip(_Rewriter):
    """``s.strip()`` (``lstrip``, ``rstrip``, ``split``, ``rsplit``) → ``s.strip(" ")``: spaces only, not whitespace."""

    node_types = _CHAINS

    def rewrite(self, expr, node):
        def rule(link: ast.expr) -> list[ast.expr]:
            if (isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute) and link.func.attr in _STRIPPERS
                    and not link.args and not link.keywords):
                return [ast.Call(func=link.func, args=[ast.Constant(" ")], keywords=[])]
            return []
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("t = s.strip()", "t = s.strip(' ')"), Example("t = s.split()", "t = s.split(' ')"))


class NarrowWhitespaceTest(_Rewriter):
    """``c.isspace()`` → ``c == " "`` and ``str.isspace`` → ``" ".__eq__``: the space alone taken for whitespace."""

    node_types = _CHAINS

    def rewrite(self, expr, node):
        called = {id(link.func) for link in _chain(expr) if isinstance(link, ast.Call)}

        def rule(link: ast.expr) -> list[ast.expr]:
            if (isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute) and link.func.attr == "isspace"
                    and not link.keywords):
                by_type = isinstance(link.func.value, ast.Name) and link.func.value.id == "str"
                if by_type and _only_positional(link, 1):  # str.isspace(c)
                    return [ast.Compare(left=link.args[0], ops=[ast.Eq()], comparators=[ast.Constant(" ")])]
                if not by_type and not link.args:  # c.isspace()
                    return [ast.Compare(left=link.func.value, ops=[ast.Eq()], comparators=[ast.Constant(" ")])]
            if (isinstance(link, ast.Attribute) and link.attr == "isspace" and id(link) not in called
                    and isinstance(link.value, ast.Name) and link.value.id == "str"):  # str.isspace as a function
                return [ast.Attribute(value=ast.Constant(" "), attr="__eq__")]
            return []
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("b = c.isspace()", "b = c == ' '"),
                Example("b = all(map(str.isspace, s))", "b = all(map(' '.__eq__, s))"))


# escapes of a regular expression's classes, and the narrower class a learner writes for each
_CLASSES = {"\\s": " ", "\\d": "[0-9]", "\\w": "[A-Za-z0-9_]"}


class NarrowRegexClass(_Rewriter):
    r"""In a string literal holding ``\s``, ``\d`` or ``\w``: the space, ``[0-9]``, ``[A-Za-z0-9_]`` (one per class).

    Python's ``re`` gives these classes their Unicode meaning (every whitespace, every decimal digit,
    every letter); a learner who writes the ASCII class, or a space for whitespace, is narrower.
    """

    node_types = _STRINGS

    def rewrites(self, node):
        if node.type not in self.node_types:
            return []
        code = node.get_code(include_prefix=False)
        raw = code.lstrip("bBuUfF")[:1] in ("r", "R")
        expr = _parsed(code)
        if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
            return []
        texts = []
        for escape, narrow in _CLASSES.items():
            written = escape if raw else "\\" + escape
            if written in code:
                texts.append(code.replace(written, narrow))
        return [text for text in texts if _valid(text)]

    @classmethod
    def examples(cls):
        return (Example('p = r"\\s+"', 'p = r" +"'), Example('p = r"\\d+"', 'p = r"[0-9]+"'))


# ---- another sort key ------------------------------------------------------------------------

_SORTERS = ("sorted", "min", "max", ".sort")


class AnotherSortKey(_Rewriter):
    """In ``sorted``, ``min``, ``max``, ``.sort``: ``key=`` or ``reverse=`` dropped, or a tuple key's fields changed."""

    node_types = _CHAINS

    def rewrite(self, expr, node):
        def rule(link: ast.expr) -> list[ast.expr]:
            if _called(link) not in _SORTERS:
                return []
            assert isinstance(link, ast.Call)
            out: list[ast.expr] = []
            for index, keyword in enumerate(link.keywords):
                if keyword.arg in ("key", "reverse"):
                    rest = link.keywords[:index] + link.keywords[index + 1:]
                    out.append(ast.Call(func=link.func, args=link.args, keywords=rest))
                if keyword.arg == "key" and isinstance(keyword.value, ast.Lambda) and isinstance(
                        keyword.value.body, ast.Tuple) and len(keyword.value.body.elts) >= 2:
                    fields = keyword.value.body.elts
                    variants = [fields[:i] + fields[i + 1:] for i in range(len(fields))]
                    variants.append([fields[1], fields[0], *fields[2:]])
                    for variant in variants:
                        key = ast.Lambda(args=keyword.value.args, body=ast.Tuple(elts=variant, ctx=ast.Load()))
                        keywords = list(link.keywords)
                        keywords[index] = ast.keyword(arg="key", value=key)
                        out.append(ast.Call(func=link.func, args=link.args, keywords=keywords))
            return out
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("y = sorted(x, key=f)", "y = sorted(x)"),
                Example("y = sorted(x, reverse=True)", "y = sorted(x)"))


# ---- a slice or range bound off by one -------------------------------------------------------


def _bounds(expr: ast.expr | None) -> bool:
    """Whether a bound is one to move: present and not a literal number (core's NumberReplacer moves those)."""
    return expr is not None and not _is_literal_scalar(expr) and not (
        isinstance(expr, ast.UnaryOp) and _is_literal_scalar(expr.operand))


class SliceOffByOne(_Rewriter):
    """A slice's bound ``[a:b]`` or a ``range`` bound moved by one (``[:n]`` → ``[:n - 1]``, ``[:n + 1]``)."""

    node_types = _CHAINS

    def rewrite(self, expr, node):
        def rule(link: ast.expr) -> list[ast.expr]:
            out: list[ast.expr] = []
            if isinstance(link, ast.Subscript) and isinstance(link.slice, ast.Slice):
                piece = link.slice
                for side in ("lower", "upper"):
                    bound = getattr(piece, side)
                    if _bounds(bound):
                        for delta in (-1, 1):
                            lower, upper = piece.lower, piece.upper
                            if side == "lower":
                                lower = _plus(bound, delta)
                            else:
                                upper = _plus(bound, delta)
                            moved = ast.Slice(lower=lower, upper=upper, step=piece.step)
                            out.append(ast.Subscript(value=link.value, slice=moved, ctx=ast.Load()))
            if _called(link) == "range" and isinstance(link, ast.Call) and _only_positional(link, len(link.args)):
                for index, bound in enumerate(link.args[:2]):
                    if _bounds(bound):
                        for delta in (-1, 1):
                            args = list(link.args)
                            args[index] = _plus(bound, delta)
                            out.append(ast.Call(func=link.func, args=args, keywords=[]))
            return out
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("y = x[:n]", "y = x[:n - 1]"), Example("y = x[:n]", "y = x[:n + 1]", occurrence=1))


# ---- an alias where a copy was needed --------------------------------------------------------


def _plain(expr: ast.expr) -> bool:
    """Whether ``expr`` names an existing object (a name, attribute or subscript), so that a copy of it is a copy."""
    return isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript))


class AliasForCopy(_Rewriter):
    """``list(x)``, ``dict(x)``, ``x.copy()``, ``copy.copy(x)``, ``copy.deepcopy(x)``, ``x[:]`` → ``x`` (x a name)."""

    node_types = _CHAINS

    def rewrite(self, expr, node):
        def rule(link: ast.expr) -> list[ast.expr]:
            name = _called(link)
            if name in ("list", "dict", "copy.copy", "copy.deepcopy", "deepcopy") and isinstance(link, ast.Call):
                if _only_positional(link, 1) and _plain(link.args[0]):
                    return [link.args[0]]
            if name == ".copy" and isinstance(link, ast.Call) and not link.args and not link.keywords:
                assert isinstance(link.func, ast.Attribute)
                return [link.func.value]
            if (isinstance(link, ast.Subscript) and isinstance(link.slice, ast.Slice)
                    and link.slice.lower is link.slice.upper is link.slice.step is None):
                return [link.value]
            return []
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("y = list(x)", "y = x"), Example("y = x.copy()", "y = x"), Example("y = x[:]", "y = x"))


# ---- a dropped de-duplication ----------------------------------------------------------------


class DroppedDeduplication(_Rewriter):
    """``set(x)``, ``dict.fromkeys(x)`` → ``list(x)``; ``if k in seen: continue`` never, ``if k not in seen:`` always.

    The last two only where the comparison is the whole test of an ``if`` without ``elif``/``else``
    whose body is ``continue`` (for ``in``).
    """

    node_types = (*_CHAINS, *_COMPARISONS)

    def rewrite(self, expr, node):
        if node.type in _COMPARISONS:
            return self._guard(expr, node)

        def rule(link: ast.expr) -> list[ast.expr]:
            if _called(link) in ("set", "dict.fromkeys") and isinstance(link, ast.Call) and _only_positional(link, 1):
                return [ast.Call(func=ast.Name("list"), args=link.args, keywords=[])]
            return []
        return _chain_rewrites(expr, rule)

    @staticmethod
    def _guard(expr, node) -> list[str]:
        parent = node.parent
        if parent is None or parent.type != "if_stmt" or parent.children[1] is not node or len(parent.children) != 4:
            return []
        if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1):
            return []
        body = parent.children[3].get_code(include_prefix=False).strip()
        if isinstance(expr.ops[0], ast.In) and body == "continue":
            return ["False"]
        if isinstance(expr.ops[0], ast.NotIn):
            return ["True"]
        return []

    @classmethod
    def examples(cls):
        return (Example("y = sorted(set(x))", "y = sorted(list(x))"),
                Example("for k in x:\n    if k in seen: continue\n", "for k in x:\n    if False: continue\n"))


# ---- rounding --------------------------------------------------------------------------------

_ROUNDERS = {"math.ceil": ("math.floor", "int"), "math.floor": ("math.ceil", "int"),
             "ceil": ("floor", "int"), "floor": ("ceil", "int"), "round": ("int",), "int": ("round",)}


def _callee(name: str) -> ast.expr:
    module, _, attr = name.rpartition(".")
    return ast.Attribute(value=ast.Name(module), attr=attr) if module else ast.Name(name)


class Rounding(_Rewriter):
    """``round(x, n)`` → ``round(x)``; ``round`` ↔ ``int``; ``ceil`` → ``floor``, ``int``, and back;
    the ceiling division ``-(-a // b)`` → ``a // b`` (the floor) and ``round(a / b)``.

    (``//`` ↔ ``/`` is core's ``ReplaceBinaryOperator_FloorDiv_Div`` and ``_Div_FloorDiv``.)
    """

    node_types = (*_CHAINS, "factor")

    def rewrite(self, expr, node):
        if node.type == "factor":
            if (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.BinOp)
                    and isinstance(expr.operand.op, ast.FloorDiv) and isinstance(expr.operand.left, ast.UnaryOp)
                    and isinstance(expr.operand.left.op, ast.USub)):
                a, b = _operand(expr.operand.left.operand), _operand(expr.operand.right)
                return [f"({a} // {b})", f"round({a} / {b})"]
            return []
        def rule(link: ast.expr) -> list[ast.expr]:
            name = _called(link)
            if not isinstance(link, ast.Call) or name not in _ROUNDERS:
                return []
            if name == "round" and _only_positional(link, 2):
                return [ast.Call(func=link.func, args=link.args[:1], keywords=[])]
            if not _only_positional(link, 1):
                return []
            return [ast.Call(func=_callee(other), args=link.args, keywords=[]) for other in _ROUNDERS[name]]
        return _chain_rewrites(expr, rule)

    @classmethod
    def examples(cls):
        return (Example("y = round(x, 2)", "y = round(x)"), Example("y = math.ceil(x)", "y = math.floor(x)"),
                Example("y = -(-a // b)", "y = (a // b)"))


# ---- the provider ----------------------------------------------------------------------------

OPERATORS: dict[str, type[Operator]] = {op.__name__: op for op in (
    EqualityToIdentity, MembershipToIdentity, NarrowStrip, NarrowWhitespaceTest, NarrowRegexClass,
    AnotherSortKey, SliceOffByOne, AliasForCopy, DroppedDeduplication, Rounding)}

#: The name pyproject.toml registers the provider under: the operators are ``learner/<class name>``.
PROVIDER = "learner"


class LearnerOperators:
    """cosmic-ray's operator provider for the learner operators (entry point ``cosmic_ray.operator_providers``)."""

    def __iter__(self):
        return iter(OPERATORS)

    def __getitem__(self, name):
        return OPERATORS[name]
