"""Predict, then run (issue 33): a prediction the learner locks in before the experiment runs.

    >>> p = predict("How many partition lines does --describe print?", kind="number", example=3)
    >>> p                               # in JupyterLab: the question, a field, a "Lock in" button
    >>> p.answer(3)                     # what "Lock in" does (a cell can call it too)
    >>> if p.ready():                   # the run cell: locks p; unanswered: a friendly note, no
    ...     print(describe(...))        # result shown (and no stack trace)
    >>> p.score(actual, explain="...")  # the next cell: right, or the gap and what it means

Kinds: ``"choice"`` (one of ``choices``; implied by ``choices``), ``"number"`` (an integer,
within ``low``..``high`` when given) and ``"offsets"`` (a list of offsets, ``0, 1, 2``).

The run cell locks the prediction (``ready()`` or ``reveal(...)``): from then on the answer
cannot change, in the browser or from Python. An unanswered prediction stays unanswered and the
run cell shows ``answer the prediction above first`` instead of its result; its score says "not
answered yet", never a failure.

**Pre-answered copies.** The saved (executed) notebooks are run headless, where nobody clicks:
with the environment variable ``KAFKASIM_PREDICTIONS=example`` (``scripts/execute-notebooks.py``
and nbval's ``notebooks/conftest.py`` set it) a prediction is made answered with its
``example`` answer, a realistic learner's guess (sometimes wrong), and says so; the learner
edition (``scripts/editions.py``) clears those outputs. Without the variable (a learner's
JupyterLab) nothing is pre-answered.

The question, the choices and the explanations are English in the code and shown in the course's
language: each is looked up with ``tr`` under msgctxt ``kafkasim.prediction``
(``kafkasim.course.predictions`` lists the course's, so ``scripts/i18n.py`` collects them), like
every word ``static/prediction.js`` shows (the ``strings`` trait, ``ui_strings``).
"""

from __future__ import annotations

import difflib
import html
import os
from dataclasses import dataclass
from pathlib import Path

import anywidget
import traitlets

from kafkasim.widgets._render import N_
from kafkasim.widgets._render import tr as _tr

I18N_CONTEXT = "kafkasim.prediction"
STATIC = Path(__file__).parent / "static"
KINDS = ("choice", "number", "offsets")
ENV = "KAFKASIM_PREDICTIONS"        # "example": pre-answer with each prediction's example
MAX_OFFSETS = 1000


def tr(message: str, /, **fields) -> str:
    """``_render.tr`` under the predictions' ``I18N_CONTEXT``."""
    return _tr(message, _context=I18N_CONTEXT, **fields)


#: every string prediction.js shows (its T("...") keys; tests/test_prediction.py checks them)
JS_STRINGS = (
    N_("Your prediction"), N_("Lock in"), N_("Change"), N_("pick one answer first"),
    N_("a whole number, e.g. 3"), N_("offsets separated by commas, e.g. 0, 1, 2"),
    N_("Locked in: {answer}. You can change it until you run the experiment."),
    N_("Locked: {answer}. The experiment has run."),
    N_("Not answered: the experiment ran without your prediction."),
    N_("Prediction: answer, then press Lock in"),
)


def ui_strings() -> dict[str, str]:
    """English -> the course's language for every string prediction.js shows."""
    return {s: tr(s) for s in JS_STRINGS}


def pre_answering() -> bool:
    """True where unanswered predictions take their example answer (``KAFKASIM_PREDICTIONS``)."""
    return os.environ.get(ENV, "").strip().lower() == "example"


def _did_you_mean(value: str, options) -> str:
    close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_kind(kind, choices) -> str:
    if kind is None:
        if choices is None:
            raise ValueError("predict(kind=...) is required without choices: one of "
                             f"{', '.join(map(repr, KINDS))}")
        return "choice"
    if kind not in KINDS:
        raise ValueError(f"predict(kind={kind!r}): must be one of {', '.join(map(repr, KINDS))}"
                         f"{_did_you_mean(kind, KINDS)}")
    if (kind == "choice") != (choices is not None):
        raise ValueError(f"predict(choices=...) goes with kind='choice' (got kind={kind!r}, "
                         f"choices={choices!r})")
    return kind


def _check_choices(choices) -> tuple[str, ...]:
    if isinstance(choices, str) or not all(isinstance(c, str) and c for c in choices):
        raise TypeError(f"predict(choices={choices!r}): a list of non-empty strings")
    if len(choices) < 2 or len(set(choices)) != len(choices):
        raise ValueError(f"predict(choices={list(choices)!r}): at least two different answers")
    return tuple(choices)


def _as_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"{what}={value!r}): a whole number")
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"{what}={value!r}): a whole number, e.g. 3") from None


def _parse_offsets(value) -> list[int]:
    parts = [s for s in value.replace(",", " ").split()] if isinstance(value, str) else value
    if not isinstance(parts, list | tuple) or len(parts) > MAX_OFFSETS:
        raise TypeError(f"answer(value={value!r}): a list of offsets, e.g. [0, 1, 2] or "
                        "'0, 1, 2'")
    out = [_as_int(v, "answer(value") for v in parts]
    if any(o < 0 for o in out):
        raise ValueError(f"answer(value={value!r}): offsets are >= 0")
    return sorted(set(out))


def show(answer) -> str:
    """An answer as the learner reads it (offsets: ``0, 1, 2``; none: ``(none)``)."""
    if isinstance(answer, list):
        return ", ".join(map(str, answer)) if answer else tr("(none)")
    return tr(answer) if isinstance(answer, str) else str(answer)


@dataclass(frozen=True)
class Scored:
    """A prediction against what happened: ``right`` is None when it was not answered."""

    right: bool | None
    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        colour = {True: "#2e7d32", False: "#8a5a00", None: "#555"}[self.right]
        return (f"<pre style='white-space:pre-wrap;color:{colour};margin:0'>"
                f"{html.escape(self.text)}</pre>")


class Prediction(anywidget.AnyWidget):
    """One question, answered and locked in before the experiment runs (module docstring)."""

    _esm = STATIC / "prediction.js"
    _css = STATIC / "prediction.css"
    question = traitlets.Unicode("").tag(sync=True)        # in the course's language
    kind = traitlets.Unicode("choice").tag(sync=True)
    choices = traitlets.List(traitlets.Unicode()).tag(sync=True)   # translated labels
    shown = traitlets.Unicode("").tag(sync=True)           # the answer as shown; "" unanswered
    locked = traitlets.Bool(False).tag(sync=True)          # the run cell has started
    error = traitlets.Unicode("").tag(sync=True)
    strings = traitlets.Dict().tag(sync=True)

    def __init__(self, question: str, choices=None, kind: str | None = None, *,
                 low: int | None = None, high: int | None = None, example=None) -> None:
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"predict(question={question!r}): the question, a non-empty string")
        kind = _check_kind(kind, choices)
        self._choices = _check_choices(choices) if kind == "choice" else ()
        if low is not None and high is not None and \
                _as_int(low, "predict(low") > _as_int(high, "predict(high"):
            raise ValueError(f"predict(low={low}, high={high}): low must be <= high")
        super().__init__()
        self.strings = ui_strings()
        self.english = question
        self.question, self.kind = tr(question), kind
        self.choices = [tr(c) for c in self._choices]
        self.low, self.high = low, high
        self._value = None
        self.example = None if example is None else self._checked(example, "predict(example")
        self.pre_answered = False
        if self.example is not None and pre_answering():
            self.answer(self.example)
            self.pre_answered = True
        self.on_msg(self._on_front_end)

    # -- answering ------------------------------------------------------------------------------
    @property
    def value(self):
        """The locked-in answer (a choice's English text, an int, a sorted list), or None."""
        return self._value

    @property
    def answered(self) -> bool:
        return self._value is not None

    def _checked(self, value, what: str = "answer(value"):
        if self.kind == "choice":
            shown = dict(zip(self.choices, self._choices, strict=True))
            value = shown.get(value, value) if isinstance(value, str) else value
            if value not in self._choices:
                raise ValueError(f"{what}={value!r}): one of {list(self._choices)!r}"
                                 f"{_did_you_mean(value, self._choices)}")
            return value
        if self.kind == "offsets":
            return _parse_offsets(value)
        number = _as_int(value, what)
        if (self.low is not None and number < self.low) or \
                (self.high is not None and number > self.high):
            raise ValueError(f"{what}={number}): between {self.low} and {self.high}")
        return number

    def answer(self, value) -> Prediction:
        """Lock in ``value`` (what the "Lock in" button does); a bad value raises and changes
        nothing; after the run cell started the prediction is locked (ValueError)."""
        if self.locked:
            yours = show(self._value) if self.answered else "-"
            raise ValueError(f"answer(value={value!r}): the prediction is locked, the experiment "
                             f"has run (your answer: {yours})")
        self._value = self._checked(value)
        self.shown, self.error = show(self._value), ""
        return self

    def _on_front_end(self, _widget, content, _buffers) -> None:
        try:
            if content.get("action") == "lock":
                value = content.get("value")
                if self.kind == "choice" and isinstance(value, int):
                    value = self._choices[value] if 0 <= value < len(self._choices) else None
                self.answer(value)
            elif content.get("action") == "change" and not self.locked:
                self._value, self.shown = None, ""
        except (ValueError, TypeError) as exc:
            self.error = str(exc)

    # -- the run cell ---------------------------------------------------------------------------
    def lock(self) -> bool:
        """Lock the prediction (the run cell starts); True if it is answered."""
        self.locked = True
        return self.answered

    def ready(self) -> bool:
        """The run cell's guard: locks the prediction; unanswered, prints a friendly note
        (no result, no stack trace) and returns False."""
        return ready(self)

    def reveal(self, *results) -> None:
        """``display(*results)`` once the prediction is answered (``ready()``)."""
        if self.ready():
            from IPython.display import display

            display(*results)

    # -- the next cell --------------------------------------------------------------------------
    def score(self, actual, explain=None, *, within: int = 0) -> Scored:
        """The prediction against ``actual`` (what happened), and what the gap means:
        ``explain`` is a text, or a dict from a predicted answer to its text (``"*"``: any
        other answer); ``within``: a number this close counts as right (timings).
        Unanswered: "not answered yet"."""
        if isinstance(within, bool) or not isinstance(within, int) or within < 0:
            raise ValueError(f"score(within={within!r}): a whole number >= 0")
        if within and self.kind != "number":
            raise ValueError(f"score(within={within}): only for kind='number' (this one is "
                             f"{self.kind!r})")
        actual = self._checked(actual, "score(actual")
        if not self.answered:
            return Scored(None, tr("Not answered yet: it was {actual}. Next time, lock in a "
                                   "prediction before you run the experiment.",
                                   actual=show(actual)))
        right = self._value == actual or (within > 0 and abs(self._value - actual) <= within)
        lines = [self._verdict(actual, right)]
        if self.pre_answered:
            lines[0] = tr("[example answer] {verdict}", verdict=lines[0])
        note = self._explanation(explain)
        if note:
            lines.append(note)
        return Scored(right, "\n".join(lines))

    def _verdict(self, actual, right: bool) -> str:
        fields = {"you": show(self._value), "actual": show(actual)}
        if right:
            return tr("✓ You predicted {you}, and it was {actual}.", **fields)
        if self.kind == "number":
            gap = self._value - actual
            key = (N_("You predicted {you}; it was {actual}: {n} too many.") if gap > 0 else
                   N_("You predicted {you}; it was {actual}: {n} too few."))
            return tr(key, n=abs(gap), **fields)
        if self.kind == "offsets":
            gaps = []
            extra = sorted(set(self._value) - set(actual))
            missing = sorted(set(actual) - set(self._value))
            if extra:
                gaps.append(tr("not among them: {offsets}", offsets=show(extra)))
            if missing:
                gaps.append(tr("left out: {offsets}", offsets=show(missing)))
            return tr("You predicted {you}; it was {actual} ({gaps}).", gaps="; ".join(gaps),
                      **fields)
        return tr("You predicted {you}; it was {actual}.", **fields)

    def _explanation(self, explain) -> str:
        if explain is None:
            return ""
        if isinstance(explain, str):
            return tr(explain)
        if not isinstance(explain, dict):
            raise TypeError(f"score(explain={explain!r}): a text, or a dict answer -> text")
        key = self._value if not isinstance(self._value, list) else tuple(self._value)
        text = explain.get(key, explain.get("*"))
        return tr(text) if text else ""

    # -- what a notebook shows ------------------------------------------------------------------
    def text(self) -> str:
        """The prediction as text (nbval, GitHub): never ``None``."""
        lines = [tr("Prediction: {question}", question=self.question)]
        if self.kind == "choice":
            lines += [f"  ( ) {c}" for c in self.choices]
        if not self.answered:
            lines.append(tr("  not answered yet"))
        elif self.pre_answered:
            lines.append(tr("  example answer (no learner): {answer}", answer=self.shown))
        else:
            lines.append(tr("  your answer: {answer}", answer=self.shown))
        return "\n".join(lines)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        from kafkasim.widgets._render import pre, widget_bundle

        return widget_bundle(_AsWidget(self), self.text(), pre(self.text()))


class _AsWidget:
    """The anywidget's own mime bundle (``AnyWidget._repr_mimebundle_``)."""

    def __init__(self, widget: Prediction) -> None:
        self.widget = widget

    def _repr_mimebundle_(self, **kwargs) -> dict:
        out = anywidget.AnyWidget._repr_mimebundle_(self.widget, **kwargs)
        return out[0] if isinstance(out, tuple) else (out or {})


def ready(*predictions: Prediction) -> bool:
    """The run cell's guard over several predictions: locks them all; True when all are
    answered, else one friendly note (``Prediction.ready``) and False."""
    if not predictions or not all(isinstance(p, Prediction) for p in predictions):
        raise TypeError(f"ready(*predictions={predictions!r}): one or more predict(...) widgets")
    if all([p.lock() for p in predictions]):
        return True
    print(tr("Answer the prediction above first (press Lock in), then run this cell "
             "again: the result stays hidden until you have predicted it."))
    return False


def predict(question: str, choices=None, kind: str | None = None, *, low: int | None = None,
            high: int | None = None, example=None) -> Prediction:
    """A prediction widget (module docstring): ``predict("Who leads?", choices=["1", "2"])``,
    ``predict("HW?", kind="number", low=0)``, ``predict("Offsets read?", kind="offsets")``;
    ``example``: the answer a pre-answered copy shows (``KAFKASIM_PREDICTIONS=example``)."""
    return Prediction(question, choices, kind, low=low, high=high, example=example)
