"""The from-history helpers against the real LangChain, LlamaIndex and Haystack classes: a
turn's earlier turns (`Asked.history`) become each library's chat messages, in order, and
reach a prompt, a chat engine and a chat prompt as the library reads them. The libraries are
imported in the tests: at module level they would cost every run's collection seconds."""

from __future__ import annotations

import pytest

from pytest_ragate.adapters import (
    AdapterError,
    haystack_history,
    langchain_history,
    llamaindex_history,
)
from pytest_ragate.answer import Answer, Asked, Earlier

pytestmark = pytest.mark.heavy  # LangChain, LlamaIndex and haystack take seconds to import

TURN_3 = Asked("And for e-bikes?", conversation="bikes", turn=3, history=(
    Earlier(turn=1, question="How much is a bike?", answer=Answer(text="400 euros.")),
    Earlier(turn=2, question="And a helmet?", answer=Answer(text="", abstained=True))))


def _pairs(messages: list[object], role: str, text: str) -> list[tuple[str, str]]:
    return [(str(getattr(m, role)), str(getattr(m, text))) for m in messages]


def test_a_question_without_earlier_turns_has_no_history() -> None:
    first = Asked("How much is a bike?", conversation="bikes", turn=1)
    for helper in (langchain_history, llamaindex_history, haystack_history):
        assert helper("How much is a bike?") == [] and helper(first) == []
    with pytest.raises(AdapterError, match="got Answer"):
        langchain_history(Answer(text="x"))  # type: ignore[arg-type]


def test_langchain_messages_fill_a_history_placeholder() -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    history = langchain_history(TURN_3)
    assert [type(m) for m in history] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from the handbook."),
                                               MessagesPlaceholder("history"),
                                               ("human", "{question}")])
    sent = prompt.invoke({"history": history, "question": TURN_3}).to_messages()
    assert [(m.type, m.content) for m in sent] == [
        ("system", "Answer from the handbook."), ("human", "How much is a bike?"),
        ("ai", "400 euros."), ("human", "And a helmet?"), ("ai", ""),
        ("human", "And for e-bikes?")]


def test_llamaindex_messages_reach_a_chat_engine() -> None:
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import MockLLM

    history = llamaindex_history(TURN_3)
    assert [(m.role.value, m.content) for m in history] == [
        ("user", "How much is a bike?"), ("assistant", "400 euros."),
        ("user", "And a helmet?"), ("assistant", "")]
    engine = SimpleChatEngine.from_defaults(llm=MockLLM())  # MockLLM echoes its prompt
    echoed = str(engine.chat(str(TURN_3), chat_history=history))
    assert echoed.startswith("user: How much is a bike?\nassistant: 400 euros.\n"
                             "user: And a helmet?\nassistant: \nuser: And for e-bikes?")


def test_haystack_messages_go_through_a_chat_prompt() -> None:
    from haystack.components.builders import ChatPromptBuilder
    from haystack.dataclasses import ChatMessage

    history = haystack_history(TURN_3)
    template = [*history, ChatMessage.from_user("{{ question }}")]
    built = ChatPromptBuilder(template=template).run(question=str(TURN_3))["prompt"]
    assert [(m.role.value, m.text) for m in built] == [
        ("user", "How much is a bike?"), ("assistant", "400 euros."),
        ("user", "And a helmet?"), ("assistant", ""), ("user", "And for e-bikes?")]
