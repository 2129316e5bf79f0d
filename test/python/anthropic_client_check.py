"""Drives a running Conveyor platform's Messages and Message Batches APIs with the official Python `anthropic` client.

Each check prints one JSON line, {"check": name, "ok": true/false, "detail": ...}; a failing check never
stops the ones after it. The exit status is 1 when any check failed.

Environment:
  CONVEYOR_BASE_URL     the platform's address, e.g. http://127.0.0.1:8080 (the client adds /v1/messages)
  CONVEYOR_CHAT_MODEL   a chat deployment id
  ANTHROPIC_API_KEY     the key; any value works where no keys are configured
"""

import os
import sys
import time

import anthropic
from checks import check, exit_status, expect

BASE_URL = os.environ["CONVEYOR_BASE_URL"]
MODEL = os.environ["CONVEYOR_CHAT_MODEL"]

client = anthropic.Anthropic(
    base_url=BASE_URL, api_key=os.environ.get("ANTHROPIC_API_KEY") or "unused", max_retries=0, timeout=60
)
hello = [{"role": "user", "content": "Say hello to the queue."}]
weather = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}},
        "required": ["city"],
    },
}
made = {}


@check("messages.create")
def _():
    message = client.messages.create(
        model=MODEL,
        max_tokens=6,
        system="You are terse.",
        messages=hello,
        # Sampling fields the client no longer types go as extra body fields.
        extra_body={"temperature": 0, "top_k": 20},
    )
    expect(message.type == "message" and message.role == "assistant", f"got {message}")
    expect(message.id.startswith("msg_"), f"id {message.id}")
    expect(message.content and message.content[0].type == "text", f"content {message.content}")
    expect(message.stop_reason in ("end_turn", "max_tokens"), f"stop_reason {message.stop_reason}")
    expect(0 < message.usage.output_tokens <= 6, f"usage {message.usage}")
    made["input_tokens"] = message.usage.input_tokens + (message.usage.cache_read_input_tokens or 0)
    return message.usage.model_dump()


@check("messages.stream")
def _():
    with client.messages.stream(model=MODEL, max_tokens=5, messages=hello) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expect(final.content[0].text == text, f"{final.content} vs {text!r}")
    expect(final.usage.output_tokens == 5 and final.stop_reason == "max_tokens", f"{final.stop_reason} {final.usage}")
    return text


@check("messages.stop_sequences")
def _():
    greedy = {"model": MODEL, "max_tokens": 40, "messages": hello, "extra_body": {"temperature": 0}}
    full = client.messages.create(**greedy).content[0].text
    # A stop sequence the greedy reply is sure to contain: a piece of that very reply.
    stop = full[10:13]
    before = full[: full.index(stop)]
    message = client.messages.create(**greedy, stop_sequences=["never-generated-zzzz", stop])
    expect(message.stop_reason == "stop_sequence" and message.stop_sequence == stop, f"got {message}")
    expect(message.content[0].text == before, f"{message.content[0].text!r} vs {before!r}")
    with client.messages.stream(**greedy, stop_sequences=[stop]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expect(final.stop_reason == "stop_sequence" and final.stop_sequence == stop, f"streamed {final}")
    expect(text == before, f"streamed {text!r} vs {before!r}")
    return stop


@check("messages.count_tokens")
def _():
    count = client.messages.count_tokens(model=MODEL, system="You are terse.", messages=hello)
    expect(count.input_tokens == made.get("input_tokens"), f"{count.input_tokens} vs {made.get('input_tokens')}")
    return count.input_tokens


@check("messages.tools")
def _():
    first = client.messages.create(
        model=MODEL,
        max_tokens=60,
        tools=[weather],
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
    )
    uses = [b for b in first.content if b.type == "tool_use"]
    expect(first.stop_reason == "tool_use" and uses, f"got {first}")
    expect(isinstance(uses[0].input.get("city"), str), f"input {uses[0].input}")
    second = client.messages.create(
        model=MODEL,
        max_tokens=3,
        tools=[weather],
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": first.content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": u.id, "content": "Snow, -3 C"} for u in uses],
            },
        ],
    )
    expect(second.type == "message", f"got {second}")
    return uses[0].input


@check("messages.batches")
def _():
    lengths = {"first": 2, "second-2": 3, "third_3": 4}
    batch = client.messages.batches.create(
        requests=[
            {
                "custom_id": custom_id,
                "params": {"model": MODEL, "max_tokens": n, "temperature": 0, "messages": hello},
            }
            for custom_id, n in lengths.items()
        ]
    )
    expect(batch.type == "message_batch" and batch.id.startswith("msgbatch_"), f"got {batch}")
    expect(batch.processing_status == "in_progress" and batch.request_counts.processing == 3, f"{batch}")
    deadline = time.monotonic() + 60
    while batch.processing_status != "ended":
        expect(time.monotonic() < deadline, f"still {batch.processing_status}: {batch.request_counts}")
        time.sleep(0.1)
        batch = client.messages.batches.retrieve(batch.id)
    expect(batch.request_counts.succeeded == 3 and batch.ended_at is not None, f"{batch}")
    results = {line.custom_id: line.result for line in client.messages.batches.results(batch.id)}
    expect(sorted(results) == sorted(lengths), f"custom_ids {sorted(results)}")
    for custom_id, result in results.items():
        expect(result.type == "succeeded", f"{custom_id}: {result}")
        expect(result.message.content[0].type == "text", f"{custom_id}: {result.message.content}")
        # Each result is its own request's reply: greedy, it runs to that request's max_tokens.
        expect(result.message.usage.output_tokens == lengths[custom_id], f"{custom_id}: {result.message.usage}")
    expect(batch.id in [b.id for b in client.messages.batches.list(limit=5)], "not listed")
    deleted = client.messages.batches.delete(batch.id)
    expect(deleted.type == "message_batch_deleted" and deleted.id == batch.id, f"{deleted}")
    try:
        client.messages.batches.create(requests=[{"custom_id": "bad id", "params": {"model": MODEL}}])
        expect(False, "a custom_id with a space was accepted")
    except anthropic.BadRequestError as e:
        expect(e.body["error"]["type"] == "invalid_request_error", f"{e.body}")
    return batch.request_counts.model_dump()


@check("messages.errors")
def _():
    try:
        client.messages.create(model="no-such-model", max_tokens=1, messages=hello)
        expect(False, "an unknown model was accepted")
    except anthropic.NotFoundError as e:
        expect(e.status_code == 404 and e.body["error"]["type"] == "not_found_error", f"{e.status_code} {e.body}")
    try:
        client.messages.create(model=MODEL, max_tokens=1, messages=[{"role": "user", "content": []}])
        expect(False, "empty content was accepted")
    except anthropic.BadRequestError as e:
        expect(e.body["error"]["type"] == "invalid_request_error", f"{e.body}")
    wrong = anthropic.Anthropic(base_url=BASE_URL, api_key="sk-wrong", max_retries=0)
    try:
        wrong.messages.create(model=MODEL, max_tokens=1, messages=hello)
        # With no keys configured any key is taken: nothing to check then.
    except anthropic.AuthenticationError as e:
        expect(e.body["error"]["type"] == "authentication_error", f"{e.body}")
    return "ok"


sys.exit(exit_status())
