"""The rooms' documents: what the presenter sends, what followers receive, what a poll is.

The presenter sends the lab's view state (program, pass, step, settings), never pixels:
every follower traces `source` itself through `/api/trace` and shows the same frame.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict

MAX_SOURCE_CHARS = 64_000       # Limits.max_source_bytes: a longer program could not run
MAX_SETTINGS = 16
Setting = str | int | float | bool | None


def _whole(value: object) -> object:
    """JSON has one kind of number, and JSON Schema's "integer" takes 3.0 as 3; a bool or a
    string is still refused (the field is strict)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole), Strict()]


class ViewState(BaseModel):
    """One frame of the lab: the program, which backward call (`pass`, from 0) and how many
    of its pops are done (`step`: 0 is the call's start; one more than its pops is the
    frame after the program's end, on the last call), and the page's settings."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    source: str = Field(max_length=MAX_SOURCE_CHARS, description="the program's text")
    pass_: WholeNumber = Field(0, alias="pass", ge=0, le=10_000_000,
                               description="backward call, from 0")
    step: WholeNumber = Field(0, ge=0, le=10_000_000,
                              description="pops done within that call")
    settings: Annotated[dict[Annotated[str, Field(max_length=40)], Setting],
                        Field(max_length=MAX_SETTINGS)] = Field(
        default_factory=dict, description="the page's settings (speed, retain, ...)")


class RoomCreate(BaseModel):
    state: ViewState | None = Field(None, description="the room's first frame, if any")


class RoomCreated(BaseModel):
    code: str = Field(description="the join code to read aloud: six characters, no look-alikes")
    token: str = Field(description="the control token: keep it in the presenter's browser")
    join_url: str
    qr_url: str = Field(description="the QR code of join_url, an SVG")


class Candidate(BaseModel):
    node: int = Field(description="a node id of the pass's graph")
    label: str = Field(description="`MulBackward0 #2`, `AccumulateGrad(w)`")
    ready: bool = Field(description="in the ready queue now (else a node still waiting)")


class Question(BaseModel):
    """"Which node pops next?" at one frame; the answer stays with the server until the
    presenter reveals it."""

    id: str
    question: str
    pass_: int = Field(alias="pass")
    step: int
    candidates: list[Candidate]

    model_config = ConfigDict(populate_by_name=True)


class Answer(BaseModel):
    """The engine's answer to a question and why, in one sentence."""

    node: int
    label: str
    reason: str


class PollCreate(BaseModel):
    kind: Literal["next-pop"] = "next-pop"


class PollCreated(BaseModel):
    """For the presenter (and the speaker notes) only: the question with its answer."""

    question: Question
    answer: Answer


class AnswerSubmit(BaseModel):
    device: str = Field(pattern=r"^[A-Za-z0-9_-]{8,64}$",
                        description="a random id the device keeps: one answer per device")
    node: WholeNumber = Field(description="the candidate chosen")


class AnswerReceived(BaseModel):
    poll: str
    node: int


class Tally(BaseModel):
    """How the room answered (the presenter's view; students only ever see the answer)."""

    poll: str
    answers: int
    counts: dict[str, int] = Field(description="answers by candidate node id")
    revealed: bool


class Revealed(BaseModel):
    """What followers receive when the presenter reveals: the engine's answer, never the
    room's distribution (nothing a student sends is shown to other students)."""

    poll: str
    answer: Answer


class RoomInfo(BaseModel):
    code: str
    version: int = Field(description="the id of the room's latest event")
    state: ViewState | None
    poll: Question | None = Field(None, description="the question asked last, if any")
    revealed: Revealed | None = None
    followers: int = Field(description="pages following the room right now")
    idle_expiry_s: int = Field(description="the room ends after this long without the "
                                           "presenter")


class Ended(BaseModel):
    reason: Literal["ended", "expired"]


EventKind = Literal["state", "poll", "results", "ended"]
