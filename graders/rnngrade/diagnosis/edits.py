"""What is wrong with the first wrong value: one small edit of the reference's own formula for it.

Once localisation has found the first reference value that goes wrong (``localise.first_wrong``),
the expression the reference computes it with is edited in small ways: a factor of a product
dropped (a sigmoid's ``x * (1 - x)`` as one factor) or added (one of the function's own values of
the node's shape, or its derivative form ``x * (1 - x)`` or ``1 - x ** 2``); a term of a sum
dropped; one operand for another of the function's values of the same shape (also inside a
one-call definition: ``np.tanh(a_next)`` for ``np.tanh(c_next)``); a derivative or activation
swapped (``1 - x ** 2`` for ``x * (1 - x)`` and back, ``1 - x`` or ``(1 - x) ** 2`` for
``1 - x ** 2``, tanh applied twice, a sigmoid for a tanh); ``np.maximum`` for ``np.minimum`` and
back, a ``np.sqrt`` (``exp``, ``log``, ``abs``) left out; a transpose added or removed; a sum's
axis or ``keepdims`` changed, a mean for it, or none; a slice's halves swapped, or its rows taken
from the other end; a sign flipped.
Each edit is evaluated on the reference's own captured values of its inputs (NumPy on captured
arrays, never the student's code).

An edit names the mistake only when its value equals the student's value of that node (the
localisation's tolerance, and the same shape) while the correct value does not; when two
different edits both do, none is named. At most ``MAX_CANDIDATES`` edits are tried per node.
Names are the student's where the student keeps a variable of that value; no number is shown.
"""

from __future__ import annotations

import ast
import copy
import math
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnngrade.diagnosis.dataflow import Flow
from rnngrade.harness.capture import MAX_ELEMENTS, RETURN
from rnngrade.results.model import Diagnosis, DiagnosisSource

EDIT = DiagnosisSource.EDIT.value
MAX_CANDIDATES = 400  # edits tried per wrong value (each a few NumPy operations on small arrays)
EVIDENCE = ("your value of `{node}` equals the course's formula for it with this one change, on "
            "the same inputs (check `{check}`)")
TANH_DERIVATIVE, SIGMOID_DERIVATIVE = "the derivative of tanh", "the derivative of the sigmoid"
_PLAIN = re.compile(r"^[A-Za-z_]\w*$")
_KEYED = re.compile(r"^([A-Za-z_]\w*)\['([A-Za-z_]\w*)'\]$")
_NUMPY = ("np", "numpy")


class _Unusable(Exception):
    """An edited expression that cannot be evaluated here: no match."""


# ------------------------------------------------------------------ evaluation

def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def _softmax(x: np.ndarray) -> np.ndarray:
    """The course's softmax: over axis 0 (a formula that calls a module's ``softmax`` of
    another kind is no formula here: its value differs from the reference's, so it is never
    edited)."""
    if x.ndim == 0:
        raise _Unusable
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return np.asarray(e / np.sum(e, axis=0, keepdims=True))


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
    "square": np.square}
_REDUCE: dict[str, Callable[..., np.ndarray]] = {"sum": np.sum, "mean": np.mean}
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "maximum": np.maximum, "minimum": np.minimum}
_OPPOSITE = {"maximum": "minimum", "minimum": "maximum", "max": "min", "min": "max"}


def _checked(value: Any) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.size > MAX_ELEMENTS:
        raise _Unusable
    return array


def _elementwise(a: np.ndarray, b: np.ndarray) -> None:
    """Raise ``_Unusable`` unless ``a`` and ``b`` broadcast to at most ``MAX_ELEMENTS``."""
    if a.shape == b.shape or a.ndim == 0 or b.ndim == 0:
        return  # no larger than the larger of the two, each within the cap
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise _Unusable from None
    if math.prod(shape) > MAX_ELEMENTS:
        raise _Unusable


def _index(value: np.ndarray | None) -> int | None:
    if value is None:
        return None
    if value.size != 1:  # a captured number: 0-d, or one entry once it has crossed over
        raise _Unusable
    number = float(value.reshape(()))
    if not number.is_integer():
        raise _Unusable
    return int(number)


def _constant(node: ast.expr) -> Any:
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float, bool):
        raise _Unusable
    return node.value


def evaluate(node: ast.expr, values: Mapping[str, np.ndarray]) -> np.ndarray:
    """``node`` evaluated on captured ``values`` (names, ``name['key']`` and ``name[i]``
    labels): arithmetic, ``.T``, slices, a few NumPy functions and ``sigmoid``; anything else,
    or a result over ``MAX_ELEMENTS``, raises ``_Unusable``."""
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise _Unusable
        return values[node.id]
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, int | float) or isinstance(node.value, bool):
            raise _Unusable
        return np.asarray(float(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = evaluate(node.operand, values)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return _binary(node, values)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return evaluate(node.value, values).T
    if isinstance(node, ast.Subscript):
        return _subscript(node, values)
    if isinstance(node, ast.Call):
        return _call(node, values)
    raise _Unusable


def _binary(node: ast.BinOp, values: Mapping[str, np.ndarray]) -> np.ndarray:
    left = evaluate(node.left, values)
    if isinstance(node.op, ast.Pow):
        power = _constant(node.right)
        if power not in (2, 3, 0.5):
            raise _Unusable
        return _checked(left ** power)
    right = evaluate(node.right, values)
    if isinstance(node.op, ast.MatMult):
        if left.ndim != 2 or right.ndim != 2 or left.shape[1] != right.shape[0]:
            raise _Unusable
        if left.shape[0] * right.shape[1] > MAX_ELEMENTS:
            raise _Unusable
        return _checked(left @ right)
    _elementwise(left, right)
    if isinstance(node.op, ast.Add):
        return _checked(left + right)
    if isinstance(node.op, ast.Sub):
        return _checked(left - right)
    if isinstance(node.op, ast.Mult):
        return _checked(left * right)
    if isinstance(node.op, ast.Div):
        return _checked(left / right)
    raise _Unusable


def _subscript(node: ast.Subscript, values: Mapping[str, np.ndarray]) -> np.ndarray:
    label = _label(node)
    if label is not None:
        if label not in values:
            raise _Unusable
        return values[label]
    base = evaluate(node.value, values)
    part = node.slice
    if isinstance(part, ast.Slice) and part.step is None and base.ndim >= 1:
        lower = _index(evaluate(part.lower, values)) if part.lower is not None else None
        upper = _index(evaluate(part.upper, values)) if part.upper is not None else None
        return base[lower:upper]
    raise _Unusable


def _call(node: ast.Call, values: Mapping[str, np.ndarray]) -> np.ndarray:
    name = _function_name(node)
    keywords = {k.arg: _constant(k.value) for k in node.keywords if k.arg is not None}
    if len(keywords) != len(node.keywords):
        raise _Unusable
    if name == "sigmoid" and len(node.args) == 1 and not keywords:
        return _checked(_sigmoid(evaluate(node.args[0], values)))
    if name == "softmax" and len(node.args) == 1 and not keywords:
        return _checked(_softmax(evaluate(node.args[0], values)))
    if name in _UNARY and len(node.args) == 1 and not keywords:
        return _checked(_UNARY[name](evaluate(node.args[0], values)))
    if name in _REDUCE and len(node.args) == 1 and set(keywords) <= {"axis", "keepdims"}:
        array = evaluate(node.args[0], values)
        axis = keywords.get("axis")
        if axis is not None and (type(axis) is not int or not -array.ndim <= axis < array.ndim):
            raise _Unusable
        return _checked(_REDUCE[name](array, axis=axis, keepdims=bool(keywords.get("keepdims"))))
    if name == "concatenate" and len(node.args) == 1 and set(keywords) <= {"axis"}:
        items = node.args[0]
        if not isinstance(items, ast.Tuple | ast.List) or not items.elts:
            raise _Unusable
        arrays = [evaluate(item, values) for item in items.elts]
        if sum(a.size for a in arrays) > MAX_ELEMENTS:
            raise _Unusable
        try:
            return _checked(np.concatenate(arrays, axis=keywords.get("axis", 0)))
        except ValueError:
            raise _Unusable from None
    if name in _BINARY and len(node.args) == 2 and not keywords:
        left, right = (evaluate(a, values) for a in node.args)
        _elementwise(left, right)
        return _checked(_BINARY[name](left, right))
    if name == "float" and len(node.args) == 1 and not keywords:
        value = evaluate(node.args[0], values)
        if value.size != 1:
            raise _Unusable
        return _checked(value.reshape(()))
    if name in ("dot", "matmul", "multiply") and len(node.args) == 2 and not keywords:
        op: ast.operator = ast.Mult() if name == "multiply" else ast.MatMult()
        return _binary(ast.BinOp(node.args[0], op, node.args[1]), values)
    raise _Unusable


def _function_name(node: ast.Call) -> str:
    """``np.tanh(...)`` → "tanh"; ``sigmoid(...)`` → "sigmoid"; "" for anything else."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
            func.value.id in _NUMPY):
        return func.attr
    if isinstance(func, ast.Name) and func.id in ("sigmoid", "softmax", "float"):
        return func.id
    return ""


def _label(node: ast.expr) -> str | None:
    """The capture's label for an operand: ``ft`` → "ft"; ``parameters["Wf"]`` →
    "parameters['Wf']"; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) in (str, int)):
        return f"{node.value.id}[{node.slice.value!r}]"
    return None


def _value(node: ast.expr, values: Mapping[str, np.ndarray]) -> np.ndarray | None:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return evaluate(node, values)
    except (_Unusable, ValueError, TypeError, IndexError, ArithmeticError, MemoryError):
        return None


def same(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    """``a`` equals ``b`` within localisation's tolerance rule, in exactly ``b``'s shape."""
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b))
                    and np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


# ------------------------------------------------------------------ the edits

@dataclass(frozen=True)
class Edit:
    """One edit of a formula: the edited ``formula``; ``kind`` ("drop" a factor, "drop term",
    "add" a factor, "replace", "transpose"); ``old``: the part changed (dropped, replaced);
    ``new``: what replaces it or is added."""

    formula: ast.expr
    kind: str
    old: ast.expr | None = None
    new: ast.expr | None = None

    @property
    def key(self) -> str:
        return ast.unparse(self.formula)


def _replaced(root: ast.expr, target: ast.AST, new: ast.expr) -> ast.expr:
    """``root`` with ``target`` (one of its nodes) replaced by ``new``: the nodes on the way down
    are new, the rest shared (no edited tree is ever changed in place)."""
    found = _rebuilt(root, target, new)
    if not isinstance(found, ast.expr):
        raise _Unusable
    return found


def _rebuilt(node: ast.AST, target: ast.AST, new: ast.AST) -> ast.AST:
    if node is target:
        return new
    fields: dict[str, Any] = {}
    changed = False
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            fields[name] = _rebuilt(value, target, new)
        elif isinstance(value, list):
            fields[name] = [_rebuilt(v, target, new) if isinstance(v, ast.AST) else v
                            for v in value]
            changed = changed or any(a is not b for a, b in zip(fields[name], value))
            continue
        else:
            fields[name] = value
            continue
        changed = changed or fields[name] is not value
    return type(node)(**fields) if changed else node


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _product(factors: list[ast.expr]) -> ast.expr:
    result = factors[0]
    for factor in factors[1:]:
        result = ast.BinOp(result, ast.Mult(), factor)
    return result


def _chains(root: ast.expr) -> list[ast.expr]:
    """The products of ``root`` (outermost ``*`` of each), and ``root`` itself when it is none."""
    inner: set[int] = set()
    chains: list[ast.expr] = []
    for node in ast.walk(root):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            if id(node) not in inner:
                chains.append(node)
            inner.update(id(n) for n in (node.left, node.right))
    if not any(c is root for c in chains):
        chains.insert(0, root)
    return chains


def _one_minus(node: ast.expr) -> ast.expr | None:
    """``x`` for ``1 - x``."""
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and isinstance(node.left, ast.Constant) and node.left.value == 1):
        return node.right
    return None


def _squared(node: ast.expr) -> ast.expr | None:
    """``x`` for ``x ** 2``."""
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
            and isinstance(node.right, ast.Constant) and node.right.value == 2):
        return node.left
    return None


def _tanh_derivative_of(node: ast.expr) -> ast.expr | None:
    """``x`` for ``1 - x ** 2``."""
    inside = _one_minus(node)
    return _squared(inside) if inside is not None else None


def _same_text(a: ast.expr, b: ast.expr) -> bool:
    return ast.unparse(a) == ast.unparse(b)


def _sigmoid_form(x: ast.expr) -> ast.expr:
    return ast.BinOp(copy.deepcopy(x), ast.Mult(),
                     ast.BinOp(ast.Constant(1), ast.Sub(), copy.deepcopy(x)))


def _tanh_form(x: ast.expr) -> ast.expr:
    return ast.BinOp(ast.Constant(1), ast.Sub(),
                     ast.BinOp(copy.deepcopy(x), ast.Pow(), ast.Constant(2)))


def _np(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load()),
                    [copy.deepcopy(a) for a in args], [])


def words_for(node: ast.expr) -> str:
    """What a factor is, when it is a derivative form: "the derivative of tanh"."""
    if _tanh_derivative_of(node) is not None:
        return TANH_DERIVATIVE
    factors = _factors(node)
    if len(factors) == 2 and any(
            (x := _one_minus(b)) is not None and _same_text(x, a)
            for a, b in (factors, factors[::-1])):
        return SIGMOID_DERIVATIVE
    return ""


@dataclass
class Quantities:
    """The values an edit may bring in: the function's own values of each shape (labels, first
    of each distinct value only), and their one-call definitions (``tanh_c`` → ``np.tanh(c)``)."""

    labels: list[str]
    values: Mapping[str, np.ndarray]
    definitions: dict[str, ast.Call]
    # the function's other returned values (``dWi`` of a returned dict): what a reduction may
    # be taken of in place of its operand (a bias gradient summed from the weight gradient)
    outputs: list[str] = field(default_factory=list)

    def of_shape(self, shape: tuple[int, ...], besides: str = "") -> list[str]:
        return [label for label in self.labels
                if self.values[label].shape == shape and label != besides]


def quantities(flow: Flow, node: str, reference: Mapping[str, np.ndarray]) -> Quantities:
    """The reference's values computed before ``node``, its parameters' and their items (none
    set inside a loop: captured at return, it holds its last step's value only); a
    value with one entry repeated (zeros in a probe that zeroes an input) is none: it would make
    different edits equal."""
    position = flow.order.index(node) if node in flow.order else len(flow.order)
    labels: list[str] = []
    for label, value in reference.items():
        keyed = _KEYED.match(label)
        base = keyed.group(1) if keyed else label if _PLAIN.match(label) else None
        if base is None or base == node or label.startswith(RETURN) or value.size < 2:
            continue
        if base in flow.looped:
            continue  # its last step's value: no value of the function to put in its place
        if not np.all(np.isfinite(value)) or np.ptp(value) == 0:
            continue
        if base in flow.order and flow.order.index(base) >= position:
            continue
        if base not in flow.order and base not in flow.params:
            continue
        if any(reference[k].shape == value.shape and np.array_equal(reference[k], value)
               for k in labels):
            continue  # the same value under another name: one of them is enough
        labels.append(label)
    definitions = {}
    for label in labels:
        formula = flow.formulas.get(label)
        if (isinstance(formula, ast.Call) and len(formula.args) == 1 and not formula.keywords
                and isinstance(formula.args[0], ast.Name) and _function_name(formula)):
            definitions[label] = formula
    outputs: dict[str, np.ndarray] = {}
    for label in flow.outputs:  # the other returned values, by the name they are returned as
        keyed = re.fullmatch(r"\['([A-Za-z_]\w*)'\]", label)
        returned = reference.get(RETURN + label)
        if (keyed and label != node and returned is not None and returned.size >= 2
                and keyed.group(1) not in reference and np.all(np.isfinite(returned))):
            outputs[keyed.group(1)] = returned
    values = {**reference, **outputs} if outputs else reference
    return Quantities(labels, values, definitions, list(outputs))


def _operand(label: str) -> ast.expr:
    keyed = _KEYED.match(label)
    if keyed:
        return ast.Subscript(ast.Name(keyed.group(1), ast.Load()), ast.Constant(keyed.group(2)),
                             ast.Load())
    return ast.Name(label, ast.Load())


def candidates(formula: ast.expr, pool: Quantities, shape: tuple[int, ...]) -> Iterator[Edit]:
    """The edits of ``formula`` (a node's value of ``shape``), most telling first; duplicates
    (the same edited text) are left to the caller."""
    yield from _derivative_edits(formula)
    yield from _dropped(formula)
    yield from _terms_dropped(formula)
    yield from _substituted(formula, pool)
    yield from _reduced_instead(formula, pool)
    yield from _shape_edits(formula, shape)
    yield from _activation_edits(formula)
    yield from _other_calls(formula)
    yield from _signs(formula)
    yield from _added(formula, pool, shape)


def _dropped(formula: ast.expr) -> Iterator[Edit]:
    for chain in _chains(formula):
        factors = _factors(chain)
        if len(factors) < 2:
            continue
        for i, factor in enumerate(factors):
            rest = factors[:i] + factors[i + 1:]
            yield Edit(_replaced(formula, chain, _product(rest)), "drop", factor)
        for i, a in enumerate(factors):  # a sigmoid's derivative x * (1 - x), as one factor
            for j, b in enumerate(factors):
                x = _one_minus(b)
                if i != j and x is not None and _same_text(x, a) and len(factors) > 2:
                    rest = [f for k, f in enumerate(factors) if k not in (i, j)]
                    yield Edit(_replaced(formula, chain, _product(rest)), "drop",
                               _product([a, b]))


def _derivative_edits(formula: ast.expr) -> Iterator[Edit]:
    """``1 - x ** 2`` ↔ ``x * (1 - x)``, ``1 - x`` for ``1 - x ** 2``, tanh applied twice."""
    for chain in _chains(formula):
        factors = _factors(chain)
        for factor in factors:
            x = _tanh_derivative_of(factor)
            if x is None:
                continue
            one_minus = ast.BinOp(ast.Constant(1), ast.Sub(), copy.deepcopy(x))
            for new in (_sigmoid_form(x), one_minus, _tanh_form(_np("tanh", x)),
                        ast.BinOp(copy.deepcopy(one_minus), ast.Pow(), ast.Constant(2))):
                yield Edit(_replaced(formula, factor, new), "replace", factor, new)
        for i, a in enumerate(factors):
            for j, b in enumerate(factors):
                x = _one_minus(b)
                if i != j and x is not None and _same_text(x, a):
                    rest = [f for k, f in enumerate(factors) if k not in (i, j)]
                    new = _tanh_form(a)
                    yield Edit(_replaced(formula, chain, _product([*rest, new])), "replace",
                               _product([a, b]), new)


def _substituted(formula: ast.expr, pool: Quantities) -> Iterator[Edit]:
    """One operand (each occurrence, then all of them) for another value of its shape, or the
    argument of its one-call definition for another."""
    operands: dict[str, list[ast.expr]] = {}
    for node in ast.walk(formula):
        if not isinstance(node, ast.Name | ast.Subscript):
            continue
        label = _label(node)
        if label is not None and label in pool.values:
            if isinstance(node, ast.Name) and any(
                    isinstance(s, ast.Subscript) and s.value is node for s in ast.walk(formula)):
                continue  # the dict of parameters["Wf"], not an operand
            operands.setdefault(label, []).append(node)
    for label, nodes in operands.items():
        for other in pool.of_shape(pool.values[label].shape, besides=label):
            new = _operand(other)
            for node in nodes:
                yield Edit(_replaced(formula, node, new), "replace", node, new)
            if len(nodes) > 1:
                edited = formula
                for node in nodes:
                    edited = _replace_text(edited, node, new)
                yield Edit(edited, "replace", nodes[0], new)
        definition = pool.definitions.get(label)
        if definition is None:
            continue
        argument = definition.args[0]
        if not isinstance(argument, ast.Name) or argument.id not in pool.values:
            continue
        for other in pool.of_shape(pool.values[argument.id].shape, besides=argument.id):
            new_call = _replaced(definition, argument, _operand(other))
            for node in nodes:
                yield Edit(_replaced(formula, node, new_call), "replace", definition, new_call)


def _reduced_instead(formula: ast.expr, pool: Quantities) -> Iterator[Edit]:
    """A sum or mean taken of another returned value, of as many rows as its operand
    (``np.sum(dWi, axis=1, keepdims=True)`` for ``np.sum(dit, ...)``)."""
    for node in ast.walk(formula):
        if not (isinstance(node, ast.Call) and _function_name(node) in _REDUCE and node.args):
            continue
        operand = _value(node.args[0], pool.values)
        if operand is None or operand.ndim == 0:
            continue
        for name in pool.outputs:
            other = pool.values[name]
            if other.ndim == operand.ndim and other.shape[0] == operand.shape[0] \
                    and other.shape != operand.shape:
                new = ast.Name(name, ast.Load())
                yield Edit(_replaced(formula, node.args[0], new), "replace", node.args[0], new)


def _replace_text(root: ast.expr, like: ast.expr, new: ast.expr) -> ast.expr:
    """``root`` with its first operand of ``like``'s text replaced by ``new``."""
    text = ast.unparse(like)
    for node in ast.walk(root):
        if isinstance(node, ast.Name | ast.Subscript) and ast.unparse(node) == text:
            return _replaced(root, node, new)
    return root


def _shape_edits(formula: ast.expr, shape: tuple[int, ...]) -> Iterator[Edit]:
    """A transpose removed or added, a sum's ``keepdims`` or axis changed, a slice's halves
    swapped."""
    if len(shape) == 2:
        yield Edit(ast.Attribute(copy.deepcopy(formula), "T", ast.Load()), "transpose")
    for node in ast.walk(formula):
        if isinstance(node, ast.Attribute) and node.attr == "T":
            yield Edit(_replaced(formula, node, node.value), "replace", node, node.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) or (
                isinstance(node, ast.Call) and _function_name(node) in ("dot", "matmul")
                and len(node.args) == 2):
            sides = (node.left, node.right) if isinstance(node, ast.BinOp) else node.args
            for side in sides:
                if not (isinstance(side, ast.Attribute) and side.attr == "T"):
                    new = ast.Attribute(copy.deepcopy(side), "T", ast.Load())
                    yield Edit(_replaced(formula, side, new), "replace", side, new)
        elif isinstance(node, ast.Call) and _function_name(node) in _REDUCE:
            yield from _reductions(formula, node)
        elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
              and node.slice.step is None
              and (node.slice.lower is None) != (node.slice.upper is None)):
            swapped = copy.deepcopy(node)
            assert isinstance(swapped.slice, ast.Slice)
            swapped.slice.lower, swapped.slice.upper = swapped.slice.upper, swapped.slice.lower
            yield Edit(_replaced(formula, node, swapped), "replace", node, swapped)
    yield from _slice_ends(formula)


def _reductions(formula: ast.expr, node: ast.Call) -> Iterator[Edit]:
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    if len(keywords) != len(node.keywords):
        return
    variants: list[dict[str, ast.expr]] = []
    if "keepdims" in keywords:
        variants.append({k: v for k, v in keywords.items() if k != "keepdims"})
    else:
        variants.append({**keywords, "keepdims": ast.Constant(True)})
    axis = keywords.get("axis")
    if isinstance(axis, ast.Constant) and axis.value in (0, 1):
        variants.append({**keywords, "axis": ast.Constant(1 - axis.value)})
    if axis is not None:
        variants.append({k: v for k, v in keywords.items() if k not in ("axis", "keepdims")})
    for variant in variants:
        new = ast.Call(copy.deepcopy(node.func), copy.deepcopy(node.args),
                       [ast.keyword(k, copy.deepcopy(v)) for k, v in variant.items()])
        yield Edit(_replaced(formula, node, new), "replace", node, new)
    other = "mean" if _function_name(node) == "sum" else "sum"
    swapped = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), other, ast.Load()),
                       copy.deepcopy(node.args), copy.deepcopy(node.keywords))
    yield Edit(_replaced(formula, node, swapped), "replace", node, swapped)
    if node.args:
        yield Edit(_replaced(formula, node, node.args[0]), "replace", node, node.args[0])


def _activation_edits(formula: ast.expr) -> Iterator[Edit]:
    """tanh ↔ sigmoid, tanh applied twice, an activation left out, a ReLU in its place."""
    for node in ast.walk(formula):
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            continue
        name = _function_name(node)
        if name not in ("tanh", "sigmoid"):
            continue
        x = node.args[0]
        other = (ast.Call(ast.Name("sigmoid", ast.Load()), [copy.deepcopy(x)], [])
                 if name == "tanh" else _np("tanh", x))
        relu = _np("maximum", x)
        relu.args.append(ast.Constant(0))
        for new in (other, ast.Call(copy.deepcopy(node.func), [copy.deepcopy(node)], []), x,
                    relu):
            yield Edit(_replaced(formula, node, new), "replace", node, new)


def _other_calls(formula: ast.expr) -> Iterator[Edit]:
    """``np.maximum`` ↔ ``np.minimum``; a NumPy function of one argument other than an
    activation (``np.sqrt``, ``np.exp``, ``np.log``, ``np.abs``) left out."""
    for node in ast.walk(formula):
        if not isinstance(node, ast.Call) or node.keywords:
            continue
        name = _function_name(node)
        if name in _OPPOSITE and isinstance(node.func, ast.Attribute):
            new = ast.Call(ast.Attribute(copy.deepcopy(node.func.value), _OPPOSITE[name],
                                         ast.Load()), copy.deepcopy(node.args), [])
            yield Edit(_replaced(formula, node, new), "replace", node, new)
        elif name in _UNARY and len(node.args) == 1:
            yield Edit(_replaced(formula, node, node.args[0]), "replace", node, node.args[0])
    for name in _UNARY:  # left out of every operand it is applied to (``np.maximum(a, b)``)
        calls = [n for n in ast.walk(formula) if isinstance(n, ast.Call) and not n.keywords
                 and _function_name(n) == name and len(n.args) == 1]
        if len(calls) > 1:
            edited = formula
            for call in calls:  # nodes off the path replaced are shared: each is found
                edited = _replaced(edited, call, call.args[0])
            yield Edit(edited, "replace", calls[0], calls[0].args[0])


def _slice_ends(formula: ast.expr) -> Iterator[Edit]:
    """A slice of ``k`` rows taken from the other end: ``x[k:]`` ↔ ``x[:-k]`` and ``x[:k]`` ↔
    ``x[-k:]`` (the same count of rows, the other rows)."""
    for node in ast.walk(formula):
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
                and node.slice.step is None
                and (node.slice.lower is None) != (node.slice.upper is None)):
            continue
        bound = node.slice.lower if node.slice.lower is not None else node.slice.upper
        assert bound is not None
        negated = (bound.operand if isinstance(bound, ast.UnaryOp)
                   and isinstance(bound.op, ast.USub)
                   else ast.UnaryOp(ast.USub(), copy.deepcopy(bound)))
        moved = copy.deepcopy(node)
        assert isinstance(moved.slice, ast.Slice)
        if node.slice.lower is not None:
            moved.slice.lower, moved.slice.upper = None, negated
        else:
            moved.slice.lower, moved.slice.upper = negated, None
        yield Edit(_replaced(formula, node, moved), "replace", node, moved)


def _terms_dropped(formula: ast.expr) -> Iterator[Edit]:
    """One term of a sum left out (``a - b`` without ``a`` is ``-b``)."""
    for node in ast.walk(formula):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)
                and _one_minus(node) is None):  # 1 - x is a derivative form, not a sum
            yield Edit(_replaced(formula, node, node.left), "drop term", node.right)
            right = (node.right if isinstance(node.op, ast.Add)
                     else ast.UnaryOp(ast.USub(), node.right))
            yield Edit(_replaced(formula, node, right), "drop term", node.left)


def _signs(formula: ast.expr) -> Iterator[Edit]:
    """``+`` ↔ ``-``; a difference the other way round (``x ** 2 - 1`` for ``1 - x ** 2``)."""
    for node in ast.walk(formula):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            flipped = ast.BinOp(node.left, ast.Sub() if isinstance(node.op, ast.Add)
                                else ast.Add(), node.right)
            yield Edit(_replaced(formula, node, flipped), "replace", node, flipped)
    for node in ast.walk(formula):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            turned = ast.BinOp(copy.deepcopy(node.right), ast.Sub(), copy.deepcopy(node.left))
            yield Edit(_replaced(formula, node, turned), "replace", node, turned)


def _added(formula: ast.expr, pool: Quantities, shape: tuple[int, ...]) -> Iterator[Edit]:
    """A factor more: each value of the node's shape, or its derivative forms."""
    labels = pool.of_shape(shape)
    for chain in _chains(formula):
        factors = _factors(chain)
        for label in labels:
            x = _operand(label)
            for new in (x, _sigmoid_form(x), _tanh_form(x)):
                yield Edit(_replaced(formula, chain, _product([*factors, new])), "add",
                           None, new)


# ------------------------------------------------------------------ explaining

@dataclass(frozen=True)
class Explained:
    """The one edit that explains a wrong value, and how many edits were tried."""

    edit: Edit
    tried: int


def _attempts(formula: ast.expr, pool: Quantities, correct: np.ndarray,
              limit: int) -> Iterator[tuple[Edit, np.ndarray | None]]:
    """The edits of ``formula`` tried, de-duplicated, at most ``limit``, each with its value
    on the reference's values (None: it cannot be evaluated). Nothing when the formula is not
    what the reference computed (nothing to edit)."""
    original = _value(formula, pool.values)
    if original is None or not same(original, correct, 1e-9, 1e-7):
        return
    seen: set[str] = {ast.unparse(formula)}
    for edit in candidates(formula, pool, correct.shape):
        if edit.key in seen:
            continue
        seen.add(edit.key)
        if len(seen) - 1 > limit:
            return
        yield edit, _value(edit.formula, pool.values)


def explaining_edit(formula: ast.expr, pool: Quantities, correct: np.ndarray,
                    student: np.ndarray, atol: float, rtol: float,
                    limit: int = MAX_CANDIDATES) -> Explained | None:
    """The single edit of ``formula`` whose value (on the reference's values) equals
    ``student`` while ``correct`` does not (None: no edit, or two different ones)."""
    if same(student, correct, atol, rtol):
        return None
    found: list[Edit] = []
    tried = 0
    for edit, value in _attempts(formula, pool, correct, limit):
        tried += 1
        if value is None or not same(student, value, atol, rtol):
            continue
        if same(value, correct, atol, rtol):
            continue  # coincides with the correct value: no evidence
        found.append(edit)
        if len(found) > 1:
            return None  # two different edits explain it: name neither
    return Explained(found[0], tried) if found else None


# ------------------------------------------------------------------ the sentence

def _renamed(node: ast.expr, names: Callable[[str], str | None],
             pool: Quantities) -> str:
    """``node`` as code in the student's names; a value the student keeps no variable for
    written as its one-call definition (``np.tanh(c_next)`` for ``tanh_c``)."""
    tree = copy.deepcopy(node)

    class _Rename(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            return self._named(name)

        def visit_Subscript(self, sub: ast.Subscript) -> ast.expr:
            if _label(sub) is not None:
                return self._named(sub)
            self.generic_visit(sub)
            return sub

        def _named(self, operand: ast.Name | ast.Subscript) -> ast.expr:
            label = _label(operand)
            if label is None:
                return operand
            student = names(label)
            if student is not None:
                return ast.Name(student, ast.Load())
            definition = pool.definitions.get(label)
            if definition is not None:
                inlined = copy.deepcopy(definition)
                self.generic_visit(inlined)
                return inlined
            return operand

    return ast.unparse(_Rename().visit(tree))


def _described(node: ast.expr, text: str, factor: bool = False) -> str:
    """``text`` as code, in brackets when it is a sum written as a ``factor``, and what it is."""
    if factor and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        text = f"({text})"
    words = words_for(node)
    return f"`{text}`" + (f" ({words})" if words else "")


def sentence(edit: Edit, node: str, names: Callable[[str], str | None], pool: Quantities
             ) -> str:
    """The student-facing sentence for ``edit`` of the value the student calls ``node``."""
    if edit.kind == "transpose":
        return f"`{node}` is transposed: its rows and columns are swapped"
    if edit.kind == "drop" and edit.old is not None:
        return (f"`{node}` is missing the factor "
                f"{_described(edit.old, _renamed(edit.old, names, pool), factor=True)}")
    if edit.kind == "drop term" and edit.old is not None:
        return (f"`{node}` is missing the term "
                f"{_described(edit.old, _renamed(edit.old, names, pool))}")
    if edit.kind == "add" and edit.new is not None:
        return (f"`{node}` has an extra factor "
                f"{_described(edit.new, _renamed(edit.new, names, pool), factor=True)}")
    assert edit.old is not None and edit.new is not None
    return (f"`{node}` uses {_described(edit.new, _renamed(edit.new, names, pool))} where the "
            f"formula has {_described(edit.old, _renamed(edit.old, names, pool))}")


def edit_diagnosis(function: str, check: str, flow: Flow, node: str, shown: str,
                   reference: Mapping[str, np.ndarray], student_value: np.ndarray,
                   names: Callable[[str], str | None], atol: float, rtol: float
                   ) -> Diagnosis | None:
    """The edit diagnosis of the wrong value ``node`` (the student calls it ``shown``): None
    when the reference has no single formula for it, or no single edit explains it."""
    formula = flow.formulas.get(node)
    correct = reference.get(RETURN + node) if node in flow.outputs else reference.get(node)
    if formula is None or correct is None:
        return None
    pool = quantities(flow, node, reference)
    found = explaining_edit(formula, pool, correct, student_value, atol, rtol)
    if found is None:
        return None
    text = sentence(found.edit, shown, names, pool)
    return Diagnosis(f"edit:{function}:{node}:{found.edit.key}", text, function,
                     evidence=EVIDENCE.format(node=shown, check=check), source=EDIT)


# ------------------------------------------------------------------ for the public tests

def tried_edits(formula: ast.expr, pool: Quantities, correct: np.ndarray, atol: float,
                rtol: float, limit: int = MAX_CANDIDATES) -> Iterator[tuple[Edit, np.ndarray]]:
    """Each edit ``explaining_edit`` would try for this node, with its value: the same
    candidates, de-duplicated and limited alike, less those it could never name (no value, or
    a value equal to the correct one). Nothing when the formula is not what the reference
    computed. ``rnngrade generate`` runs them on the public inputs (``authoring/edit_tables``)."""
    for edit, value in _attempts(formula, pool, correct, limit):
        if value is not None and not same(value, correct, atol, rtol):
            yield edit, value
