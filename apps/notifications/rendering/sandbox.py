"""The sandbox templates run in: no loader, no default globals, an allowlist of methods, no
`self`, no `str.format`, and budgets (range() numbers, loop iterations, calls, characters
built, output, work) so that one template can neither stall a worker nor exhaust its memory.

The work budget counts what a render goes through rather than what it builds: every iteration
of a loop (recursive ones included), every item a filter, test or method is handed in a string
or collection (charged up front, whether the filter reads all of it or not) and every item
drawn from a generator. One rule at the boundary instead of one per filter: `big|max`,
`big|select(...)|first` or `x in big` inside a loop of 10,000 cost 10,000 each time. A
deadline per message (`_Deadline`, NOTIFICATIONS_TEMPLATE_RENDER_SECONDS, checked whenever
anything is spent) backs the budgets up: what they miss or a slow machine stretches still ends
with an error. It is checked between operations, never inside one, so every operation that
runs in C over a value as deep as it is (hashing a dict key or a subscript, comparing, printing,
a filter or method) is charged that value's size first: nested literals such as
`(t, t, t, ...)` make a value of a billion items from a few hundred characters of source.

Blocks trim their own line (`trim_blocks`, `lstrip_blocks`): most templates are plain text
around `{% if %}` lines, and the text part would otherwise be full of blank lines.
"""

import datetime as dt
import functools
import hashlib
import time
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from jinja2 import BaseLoader, ChainableUndefined, Environment, Template, nodes
from jinja2 import filters as jinja_filters
from jinja2.exceptions import SecurityError, TemplateNotFound, TemplateSyntaxError
from jinja2.nodes import EvalContext
from jinja2.runtime import Context as TemplateContext
from jinja2.runtime import LoopContext, Undefined, markup_join, str_join
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import pass_context, pass_eval_context
from jinja2.visitor import NodeTransformer
from markupsafe import soft_str

MAX_SOURCE = {"subject": 1_000, "html": 200_000, "text": 100_000}  # characters of template
MAX_OUTPUT = 1_000_000  # characters of one rendered part
MAX_INLINED = 2 * MAX_OUTPUT  # inlining CSS repeats declarations on every element they match
# css_inline merges every matching declaration into each element's style attribute, at a cost
# near elements x declarations x (declarations + 100) nanoseconds: a stylesheet of a few
# thousand declarations under `*` kept a worker busy for minutes in a trial. This bound keeps
# it under half a second and passes real emails (a builder's, 1,500 elements x 250
# declarations, needs 1.3e8).
MAX_INLINING_WORK = 200_000_000
MAX_SUBJECT = 998  # the longest header line RFC 5322 allows
MAX_INT_BITS = 1_024  # no email needs a number past 10**300; bigger ones only cost CPU
# Per render of one part. Ample for an email (a recap loops over a few dozen metrics), and
# small enough that the worst template finishes in well under a second.
BUDGETS = {
    "range": (10_000, "range() may produce at most {:,} numbers"),
    "loop": (10_000, "loops may run at most {:,} times"),
    "call": (10_000, "at most {:,} function calls are allowed"),
    "build": (2_000_000, "at most {:,} characters or items may be built"),
    # An item costs from 20 ns (max over numbers) to about 3 us (select with a test, map
    # through a filter): on a busy two-core machine, the costliest templates stop at this
    # budget within 0.3 s. The templates we ship spend a few hundred.
    "work": (
        100_000,
        "at most {:,} items may be gone through "
        "(loop iterations and what filters, tests, comparisons and methods are given)",
    ),
}

# Methods a template may call on plain data; every other attribute of a non-dict is refused.
SAFE_METHODS: tuple[tuple[type | tuple[type, ...], frozenset[str]], ...] = (
    (dict, frozenset({"get", "items", "keys", "values"})),
    ((list, tuple), frozenset({"count", "index"})),
    (
        str,
        frozenset(
            {"capitalize", "endswith", "lower", "lstrip", "rstrip", "split", "splitlines"}
            | {"startswith", "strip", "title", "upper"}
        ),
    ),
)
# Each multiplies its input by an argument (a width, a padding); none is needed in an email.
DROPPED_FILTERS = ("center", "format", "indent", "pprint", "wordwrap")
_SIZED = (str, list, tuple)
# What templates hold that a filter may go through; its size is the work charged. Concrete
# types, not the ABCs: a test runs this check for every item select() goes through.
_Kinds = tuple[type[Collection[Any]], ...]
_VIEWS: _Kinds = (type({}.keys()), type({}.values()), type({}.items()))
_COLLECTIONS: _Kinds = (str, list, tuple, dict, set, frozenset, range, *_VIEWS)
_CONTAINERS: _Kinds = (list, tuple, set, frozenset, *_VIEWS)  # values that hold values
# Values that are neither, ruled out before the (slower) Iterator ABC check.
_SCALARS = (int, float, Decimal, type(None), Undefined, TemplateContext, EvalContext)
# Filter names a template cannot spell (not identifiers): inserted by _Budgeted only.
_LOOP_FILTER = "gamify:loop"
_CONCAT_FILTER = "gamify:concat"
_WORK_FILTER = "gamify:work"


class _RenderLimitError(Exception):
    """A render went past one of the budgets or its deadline."""


@dataclass(frozen=True)
class _Deadline:
    """When a message's render must have finished: one for all its parts."""

    seconds: float
    at: float  # time.monotonic()

    @classmethod
    def start(cls, seconds: float) -> "_Deadline":
        return cls(seconds, time.monotonic() + seconds)

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise _RenderLimitError(f"rendering took longer than {self.seconds:g} seconds")


@dataclass
class _Render:
    """The state of one render: the variation seed, what the render has spent and its
    deadline, checked whenever it spends."""

    seed: str
    deadline: _Deadline
    picks: int = 0
    spent: dict[str, int] = field(default_factory=dict)

    def spend(self, kind: str, amount: int) -> None:
        limit, message = BUDGETS[kind]
        total = self.spent.get(kind, 0) + amount
        if total > limit:
            raise _RenderLimitError(message.format(limit))
        self.spent[kind] = total
        self.deadline.check()

    def pick(self, count: int) -> int:
        # Seed plus ordinal: a retry of the message renders the same text, and two choices
        # in one template are independent.
        digest = hashlib.sha256(f"{self.seed}:{self.picks}".encode()).digest()
        self.picks += 1
        return int.from_bytes(digest[:8], "big") % count


# A context variable rather than a template variable: templates cannot reach it.
_current: ContextVar[_Render] = ContextVar("email_render")


def _charge(size: int) -> None:
    """Count a string or list about to be built; checked per value even outside a render
    because the compiler folds constant expressions before any render starts."""
    size, (limit, message) = max(size, 0), BUDGETS["build"]
    if size > limit:
        raise _RenderLimitError(message.format(limit))
    render = _current.get(None)
    if render is not None:
        render.spend("build", size)


class _Missing(ChainableUndefined):
    """A value the context lacks: prints as nothing, chains (`achievement.name` in a recap),
    compares as false and absorbs arithmetic, so one template serves messages that lack some
    data. Calling it still fails, which catches a misspelt function when a template is saved."""

    __slots__ = ()

    def _absorb(self, *args: Any) -> "_Missing":
        return self

    def _false(self, other: Any) -> bool:
        return False

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _absorb  # type: ignore[assignment]
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _absorb  # type: ignore[assignment]
    __mod__ = __rmod__ = __pow__ = __rpow__ = __pos__ = __neg__ = _absorb  # type: ignore[assignment]
    __lt__ = __le__ = __gt__ = __ge__ = _false  # type: ignore[assignment]


class _NoLoader(BaseLoader):
    """A template is one string: it may not read files or other templates."""

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, None]:
        raise TemplateNotFound(template)


class _Budgeted(NodeTransformer):
    """Routes every for loop, every `~` and every operand of a comparison (`x in big`,
    `big == other`) through the budget filters."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _LOOP_FILTER, [], [], None, None, lineno=node.lineno)
        return node

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        self.generic_visit(node)
        node.expr = _gone_through(node.expr)
        for operand in node.ops:
            operand.expr = _gone_through(operand.expr)
        return node

    def visit_Pair(self, node: nodes.Pair) -> nodes.Node:
        # A dict literal hashes its keys in C: `{deep: 1}` walks every item `deep` holds.
        self.generic_visit(node)
        node.key = _gone_through(node.key)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        items = nodes.List(node.nodes, lineno=node.lineno)
        return nodes.Filter(items, _CONCAT_FILTER, [], [], None, None, lineno=node.lineno)


def _gone_through(expr: nodes.Expr) -> nodes.Filter:
    return nodes.Filter(expr, _WORK_FILTER, [], [], None, None, lineno=expr.lineno)


def _refuse_outside_references(tree: nodes.Template) -> None:
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        raise TemplateSyntaxError("templates cannot extend, include or import others", node.lineno)
    for name in tree.find_all(nodes.Name):
        if name.name == "self":
            raise TemplateSyntaxError("'self' is not available in email templates", name.lineno)


def _check_operands(operator: str, left: Any, right: Any) -> None:
    if operator == "%" and isinstance(left, str):
        raise SecurityError("formatting strings with % is not allowed (use the number filter)")
    if operator == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
        _charge(len(left) + len(right))
    elif operator == "*" and isinstance(left, _SIZED) and isinstance(right, int):
        _charge(len(left) * right)
    elif operator == "*" and isinstance(left, int) and isinstance(right, _SIZED):
        _charge(left * len(right))
    bits = 0
    if operator == "*" and isinstance(left, int) and isinstance(right, int):
        bits = left.bit_length() + right.bit_length()
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
        bits = right * left.bit_length()
    if bits > MAX_INT_BITS:
        raise _RenderLimitError(f"numbers may have at most {MAX_INT_BITS:,} bits")


class _Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, autoescape: bool) -> None:
        super().__init__(
            autoescape=autoescape,
            undefined=_Missing,
            loader=_NoLoader(),
            finalize=_finalize,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
            cache_size=0,
        )
        for name in DROPPED_FILTERS:
            del self.filters[name]
        self.filters.update(
            number=_number, date=_date, random=_random, replace=_replace, join=_join
        )
        self.filters.update(batch=_batch, slice=_slice)
        self.filters = {name: _charged(func) for name, func in self.filters.items()}
        self.filters.update({_LOOP_FILTER: _counted, _CONCAT_FILTER: _concat})
        self.filters[_WORK_FILTER] = _gone
        # Jinja's own table is typed as plain functions, every one of them a test.
        tests: dict[str, Any] = self.tests
        self.tests = {name: _worked(func) for name, func in tests.items()}
        # Replaces range, dict, lipsum, cycler, joiner and namespace.
        self.globals = {"range": _range, "variation": _variation}

    def untrusted_template(self, source: str) -> Template:
        tree = self.parse(source)
        _refuse_outside_references(tree)
        tree = _Budgeted().visit(tree)
        tree.set_environment(self)
        return self.from_string(tree)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        if isinstance(obj, Undefined):
            return isinstance(value, Undefined)
        if isinstance(obj, LoopContext):
            return super().is_safe_attribute(obj, attr, value)
        return any(isinstance(obj, kind) and attr in names for kind, names in SAFE_METHODS)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        # The sandbox would return an undefined that fails when printed, but _Missing prints
        # as nothing: refuse at once so that a probe fails when the template is saved.
        kind = "undefined" if isinstance(obj, Undefined) else type(obj).__name__
        raise SecurityError(f"{attribute!r} is not accessible on {kind} values")

    def wrap_str_format(self, value: Any) -> None:
        # The sandbox's safe str.format can still pad to any width; refuse it like any other
        # method not allowlisted (the number filter formats numbers).
        return None

    def call_binop(self, context: TemplateContext, operator: str, left: Any, right: Any) -> Any:
        _check_operands(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _work((argument,), {})  # `d[deep]` hashes and compares the key in C
        result = super().getitem(obj, argument)
        if isinstance(argument, slice) and isinstance(result, _SIZED):
            _charge(len(result))  # a slice is a copy
        return result

    def call(self, context: TemplateContext, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _current.get().spend("call", 1)
        if isinstance(obj, LoopContext) and args:
            # loop(children) of a recursive loop iterates outside the loop's own filter.
            args = (_drawn(iter(args[0]), "loop"), *args[1:])
        elif isinstance(obj, types.MethodType) and isinstance(obj.__self__, LoopContext):
            _work(args, kwargs)  # loop.changed(deep) compares it with the last value in C
        elif isinstance(obj, types.BuiltinMethodType):
            # The methods SAFE_METHODS allows run in C over their object and arguments
            # (`big.count(x)`, `text.split()`); a macro's own work is counted as it runs.
            _work((obj.__self__, *args), kwargs)  # their arguments are strings and numbers
        result = super().call(context, obj, *args, **kwargs)
        if isinstance(result, _SIZED):
            _charge(len(result))
        return result


# --- functions and filters templates can use ----------------------------------------------


def _range(*args: int) -> range:
    numbers = range(*args)
    _current.get().spend("range", len(numbers))
    return numbers


def _variation(*options: Any) -> Any:
    """One of the options, the same for every render of one message."""
    if not options:
        raise TypeError("variation() needs at least one option")
    return options[_current.get().pick(len(options))]


@pass_context  # never folded at compile time: it needs the render's seed
def _random(context: TemplateContext, seq: Iterable[Any]) -> Any:
    options = list(seq)
    if not options:
        return context.environment.undefined("No random item, sequence was empty.")
    return options[_current.get().pick(len(options))]


def _number(value: Any, grouping: bool = False, places: int | None = None) -> Any:
    """12.5 for Decimal("12.500000"); "1,234" with grouping; rounded to at most `places`
    decimals. Anything not a number is left as it is, and None prints as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return value
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        return str(value)
    if places is not None:
        exponent = Decimal(1).scaleb(-max(0, min(int(places), 20)))
        number = number.quantize(exponent, ROUND_HALF_UP, Context(prec=1_000))
    text = format(number if number else Decimal(0), ",f" if grouping else "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _date(value: Any, pattern: str | None = None) -> Any:
    """An ISO date of the context ("2026-05-31") as "May 31, 2026", or by a strftime pattern."""
    try:
        day = dt.date.fromisoformat(value[:10]) if isinstance(value, str) else value
    except ValueError:
        return value
    if not isinstance(day, dt.date):
        return value
    return day.strftime(pattern) if pattern else f"{day:%B} {day.day}, {day.year}"


def _finalize(value: Any) -> Any:
    """What `{{ x }}` prints: numbers without trailing zeros, None as nothing."""
    if isinstance(value, float | Decimal) or value is None:
        return _number(value)
    _printed(value)
    return value


def _printed(value: Any) -> None:
    """Charge the work of turning a collection into text, before it is done: `[big] * 1000`
    costs 1,000 to build and prints ten million numbers. Strings cost only what is built."""
    if isinstance(value, (*_CONTAINERS, dict)):
        _work((value,), {})


def _size(value: Any, limit: int) -> int:
    """The items `value` holds, those of the collections it holds and the characters of its
    strings included, counted only up to just past `limit` (the same big list held many times
    over is gone through each time, by a comparison as by printing)."""
    size, pending = 0, [value]
    while pending and size <= limit:
        item = pending.pop()
        if isinstance(item, str | range):
            size += len(item)
        elif isinstance(item, dict):
            size += len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            size += len(item)
            if size <= limit:
                pending.extend(item)
    return size


def _work(args: Sequence[Any], kwargs: dict[str, Any]) -> Sequence[Any]:
    """Charge the work budget for the strings and collections a filter, test or method is
    handed (their size, nested items included: what it may go through), and count the items
    it draws from generators as it draws them. Returns the positional arguments to call it with.

    Written for speed: select() runs a test, and so this, for every item it goes through."""
    size, counted, limit = 0, args, BUDGETS["work"][0]
    for index, value in enumerate(args):
        if isinstance(value, _SCALARS):
            continue
        if isinstance(value, _COLLECTIONS):
            size += _size(value, limit)
        elif isinstance(value, Iterator) and not isinstance(value, LoopContext):
            # (a loop's own iterations are counted already)
            counted = list(counted)
            counted[index] = _drawn(value, "work")
    for value in kwargs.values():
        if isinstance(value, _COLLECTIONS):
            size += _size(value, limit)
    render = _current.get(None) if size else None
    if render is not None:  # else nothing to charge, or the compiler folding a constant
        render.spend("work", size)
    return counted


def _drawn(items: Iterator[Any], kind: str) -> Iterator[Any]:
    render = _current.get(None)
    if render is None:  # the compiler folding a constant: bounded by the source
        yield from items
        return
    for item in items:
        render.spend(kind, 1)
        if kind != "work":
            render.spend("work", 1)
        yield item


def _worked(func: Callable[..., Any]) -> Callable[..., Any]:
    """A test whose inputs count against the work budget."""

    @functools.wraps(func)  # keeps jinja_pass_arg
    def worked(*args: Any, **kwargs: Any) -> Any:
        return func(*_work(args, kwargs), **kwargs)

    return worked


def _charged(func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose inputs count against the work budget and whose result counts against
    the build budget."""

    @functools.wraps(func)  # keeps jinja_pass_arg
    def charged(*args: Any, **kwargs: Any) -> Any:
        result = func(*_work(args, kwargs), **kwargs)
        if isinstance(result, _SIZED):
            _charge(len(result))
        return result

    return charged


@pass_eval_context
def _replace(ctx: EvalContext, s: Any, old: Any, new: Any, count: int | None = None) -> Any:
    text, old_text = soft_str(s), soft_str(old)
    hits = text.count(old_text) if count is None else min(count, text.count(old_text))
    _charge(len(text) + hits * max(0, len(soft_str(new)) - len(old_text)))
    return jinja_filters.do_replace(ctx, s, old, new, count)


@pass_eval_context
def _join(ctx: EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    if attribute is not None:
        value = map(jinja_filters.make_attrgetter(ctx.environment, attribute), value)
    items = list(value)
    _charge(len(d) * max(0, len(items) - 1) + sum(len(soft_str(item)) for item in items))
    return jinja_filters.sync_do_join(ctx, items, d)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    _charge(linecount)  # the last batch is padded up to linecount items
    return jinja_filters.do_batch(value, linecount, fill_with)


def _slice(value: Collection[Any], slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    _charge(slices)
    return jinja_filters.sync_do_slice(value, slices, fill_with)


@pass_context  # never folded at compile time: the budget belongs to a render
def _counted(context: TemplateContext, iterable: Iterable[Any]) -> Iterator[Any]:
    return _drawn(iter(iterable), "loop")


def _gone(value: Any) -> Any:
    """An operand of a comparison: `in` and `==` go through all of a collection."""
    [counted] = _work((value,), {})
    return counted


@pass_eval_context
def _concat(ctx: EvalContext, values: list[Any]) -> str:
    for value in values:
        _printed(value)
    _charge(sum(len(soft_str(value)) for value in values))
    return markup_join(values) if ctx.autoescape else str_join(values)
