"""Drives a running Conveyor platform with the official Python `openai` client, and nothing else.

Each check prints one JSON line, {"check": name, "ok": true/false, "detail": ...}; a failing check never
stops the ones after it. The exit status is 1 when any check failed.

Environment:
  CONVEYOR_BASE_URL          the platform's OpenAI base URL, e.g. http://127.0.0.1:8080/v1
  CONVEYOR_CHAT_MODEL        a chat deployment id
  CONVEYOR_EMBEDDINGS_MODEL  an embeddings deployment id
  OPENAI_API_KEY             optional; any value works where no keys are configured
"""

import json
import os
import sys
import time

import openai
from checks import check, exit_status, expect

BASE_URL = os.environ["CONVEYOR_BASE_URL"]
CHAT = os.environ["CONVEYOR_CHAT_MODEL"]
EMBED = os.environ["CONVEYOR_EMBEDDINGS_MODEL"]

client = openai.OpenAI(
    base_url=BASE_URL, api_key=os.environ.get("OPENAI_API_KEY") or "unused", max_retries=0, timeout=60
)
hello = [{"role": "user", "content": "Say hello to the queue."}]
# What earlier checks made, for the later ones (a file id, a batch id).
made = {}


def needs(key):
    expect(key in made, f"needs an earlier check's {key}")
    return made[key]


def wait_for_batch(batch_id, done, timeout=90):
    until = time.monotonic() + timeout
    while True:
        batch = client.batches.retrieve(batch_id)
        if done(batch):
            return batch
        expect(time.monotonic() < until, f"batch {batch_id} still {batch.status} after {timeout} s")
        time.sleep(0.2)


def chat_line(custom_id, max_tokens):
    body = {"model": CHAT, "messages": [{"role": "user", "content": f"Request {custom_id}"}], "max_tokens": max_tokens}
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body})


def upload(name, lines):
    content = ("\n".join(lines) + "\n").encode()
    return client.files.create(file=(name, content), purpose="batch"), content


def submit(lines, window):
    file, _ = upload("batch-input.jsonl", lines)
    return client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window=window)


# --- models -------------------------------------------------------------------------------------------


@check("models.list")
def _():
    ids = [m.id for m in client.models.list()]
    expect(CHAT in ids and EMBED in ids, f"{CHAT} and {EMBED} not both in {ids}")
    return ids


@check("models.retrieve")
def _():
    model = client.models.retrieve(CHAT)
    expect(model.id == CHAT and model.object == "model", f"got {model}")
    return model.id


# --- chat -----------------------------------------------------------------------------------------------


@check("chat.sync")
def _():
    reply = client.chat.completions.create(model=CHAT, messages=hello, max_tokens=8, temperature=0)
    choice = reply.choices[0]
    expect(reply.object == "chat.completion" and reply.id.startswith("chatcmpl-"), f"not a chat.completion: {reply}")
    expect(choice.message.role == "assistant" and isinstance(choice.message.content, str), f"message {choice.message}")
    expect(choice.finish_reason in ("stop", "length"), f"finish_reason {choice.finish_reason}")
    expect(reply.usage.completion_tokens > 0, f"usage {reply.usage}")
    return {"finish_reason": choice.finish_reason, "completion_tokens": reply.usage.completion_tokens}


@check("chat.stream")
def _():
    stream = client.chat.completions.create(model=CHAT, messages=hello, max_tokens=8, temperature=0, stream=True)
    text, finishes, chunks = "", [], 0
    for chunk in stream:
        chunks += 1
        for choice in chunk.choices:
            if choice.delta.content is not None:
                text += choice.delta.content
            if choice.finish_reason is not None:
                finishes.append(choice.finish_reason)
    expect(len(finishes) == 1 and finishes[0] in ("stop", "length"), f"finish reasons {finishes}")
    expect(text, "no content in any delta")
    return {"chunks": chunks, "chars": len(text), "finish_reason": finishes[0]}


weather = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 24}, "unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}


@check("chat.tools")
def _():
    reply = client.chat.completions.create(
        model=CHAT,
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[weather, {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=200,
    )
    choice = reply.choices[0]
    expect(choice.finish_reason == "tool_calls", f"finish_reason {choice.finish_reason}")
    calls = choice.message.tool_calls or []
    expect(len(calls) == 1 and calls[0].function.name == "get_weather", f"tool calls {calls}")
    args = json.loads(calls[0].function.arguments)
    expect(isinstance(args, dict) and {"city", "unit"} <= args.keys(), f"arguments {args}")
    expect(args["unit"] in ("celsius", "fahrenheit"), f"unit {args['unit']}")
    return args


@check("chat.structured_output")
def _():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 16}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    reply = client.chat.completions.create(
        model=CHAT,
        messages=[{"role": "user", "content": "Describe a person."}],
        response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": schema, "strict": True}},
        max_tokens=200,
    )
    value = json.loads(reply.choices[0].message.content)
    expect(isinstance(value, dict) and {"name", "age"} <= value.keys(), f"value {value}")
    expect(isinstance(value["name"], str) and isinstance(value["age"], int), f"types in {value}")
    return value


# --- files ----------------------------------------------------------------------------------------------


@check("files.upload")
def _():
    file, content = upload("python-client.jsonl", [chat_line("py-0", 4), chat_line("py-1", 4)])
    expect(file.object == "file" and file.purpose == "batch", f"got {file}")
    expect(file.filename == "python-client.jsonl" and file.bytes == len(content), f"got {file}")
    made["file"], made["content"] = file.id, content
    return file.id


@check("files.list")
def _():
    ids = [f.id for f in client.files.list()]
    expect(needs("file") in ids, f"{made['file']} not in {ids}")
    return len(ids)


@check("files.retrieve")
def _():
    file = client.files.retrieve(needs("file"))
    expect(file.id == made["file"] and file.purpose == "batch", f"got {file}")
    return file.filename


@check("files.content")
def _():
    content = client.files.content(needs("file")).content
    expect(content == made["content"], f"content {content!r}")
    return len(content)


# --- batches --------------------------------------------------------------------------------------------

LONG = 200


@check("batches.create")
def _():
    # Many lines and a long window: it is still running when cancelled below.
    batch = submit([chat_line(f"long-{i}", 48) for i in range(LONG)], "720h")
    expect(batch.object == "batch" and batch.status in ("validating", "in_progress"), f"got {batch}")
    expect(batch.completion_window == "720h" and batch.endpoint == "/v1/chat/completions", f"got {batch}")
    made["batch"] = batch.id
    return {"id": batch.id, "status": batch.status}


@check("batches.retrieve")
def _():
    batch = client.batches.retrieve(needs("batch"))
    expect(batch.id == made["batch"], f"got {batch}")
    return batch.status


@check("batches.list")
def _():
    ids = [b.id for b in client.batches.list(limit=100)]
    expect(needs("batch") in ids, f"{made['batch']} not in {ids}")
    return len(ids)


@check("batches.cancel")
def _():
    batch_id = needs("batch")
    wait_for_batch(batch_id, lambda b: b.status != "validating")
    cancelling = client.batches.cancel(batch_id)
    expect(cancelling.status == "cancelling", f"cancel answered {cancelling.status}")
    batch = wait_for_batch(batch_id, lambda b: b.status not in ("in_progress", "cancelling"))
    expect(batch.status == "cancelled" and batch.cancelled_at, f"ended {batch.status}")
    expect(batch.request_counts.completed < LONG, f"request counts {batch.request_counts}")
    return {"status": batch.status, "completed": batch.request_counts.completed, "of": LONG}


@check("batches.completed")
def _():
    ids = [f"done-{i}" for i in range(3)]
    created = submit([chat_line(i, 4) for i in ids], "24h")
    batch = wait_for_batch(created.id, lambda b: b.status in ("completed", "failed", "expired", "cancelled"))
    expect(batch.status == "completed", f"ended {batch.status}: {batch.errors}")
    expect(batch.request_counts.completed == len(ids) and batch.request_counts.failed == 0, f"{batch.request_counts}")
    lines = [json.loads(line) for line in client.files.content(batch.output_file_id).text.splitlines() if line]
    expect(sorted(line["custom_id"] for line in lines) == ids, f"custom ids {[line['custom_id'] for line in lines]}")
    for line in lines:
        response = line["response"]
        expect(response["status_code"] == 200, f"line {line}")
        expect(response["body"]["object"] == "chat.completion", f"line {line}")
    return {"output_file_id": batch.output_file_id, "lines": len(lines)}


@check("files.delete")
def _():
    file_id = needs("file")
    deleted = client.files.delete(file_id)
    expect(deleted.id == file_id and deleted.deleted is True, f"got {deleted}")
    try:
        client.files.retrieve(file_id)
    except openai.NotFoundError:
        return file_id
    raise AssertionError(f"{file_id} still retrievable after delete")


# --- embeddings -----------------------------------------------------------------------------------------


@check("embeddings")
def _():
    # No encoding_format: the client asks for base64 and decodes it, as most Python callers do.
    res = client.embeddings.create(model=EMBED, input=["Embed me through the queue.", "And me."])
    vectors = [d.embedding for d in res.data]
    expect(res.model == EMBED and [d.index for d in res.data] == [0, 1], f"got model {res.model}")
    expect(len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 0, f"widths {[len(v) for v in vectors]}")
    expect(all(isinstance(x, float) for x in vectors[0]), "not floats")
    norm = sum(x * x for x in vectors[0]) ** 0.5
    expect(abs(norm - 1) < 1e-3, f"norm {norm}")
    expect(res.usage.prompt_tokens > 0, f"usage {res.usage}")
    return {"width": len(vectors[0]), "prompt_tokens": res.usage.prompt_tokens}


# --- responses ------------------------------------------------------------------------------------------


@check("responses.create")
def _():
    res = client.responses.create(
        model=CHAT, instructions="Answer briefly.", input="Say hello to the queue.", max_output_tokens=8, temperature=0
    )
    expect(res.object == "response" and res.id.startswith("resp_"), f"got {res.id}")
    expect(res.status == "incomplete" and res.usage.output_tokens == 8, f"status {res.status}, usage {res.usage}")
    expect(res.output[0].type == "message" and res.output_text == res.output[0].content[0].text, "output_text")
    made["response"] = res
    return {"id": res.id, "text": res.output_text}


@check("responses.stream")
def _():
    types, text, final = [], "", None
    # A reply cut by max_output_tokens ends with response.incomplete, as OpenAI's do; the client's
    # get_final_response() waits for response.completed only, so the last event carries the response.
    with client.responses.stream(model=CHAT, input="Stream to me.", max_output_tokens=6) as stream:
        for event in stream:
            types.append(event.type)
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.incomplete":
                final = event.response
    expect(types[:2] == ["response.created", "response.in_progress"], f"opened with {types[:2]}")
    expect(types[-1] == "response.incomplete" and final.output_text == text, f"ended with {types[-1]}")
    return {"events": len(types)}


@check("responses.retrieve")
def _():
    made_response = needs("response")
    got = client.responses.retrieve(made_response.id)
    expect(got.id == made_response.id and got.output_text == made_response.output_text, f"got {got}")
    items = client.responses.input_items.list(made_response.id)
    expect([i.type for i in items.data] == ["message"], f"items {items.data}")
    return {"status": got.status}


@check("responses.previous_response_id")
def _():
    first = needs("response")
    res = client.responses.create(
        model=CHAT, input="And again?", previous_response_id=first.id, max_output_tokens=4
    )
    expect(res.previous_response_id == first.id, f"previous {res.previous_response_id}")
    grown = res.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens
    expect(grown, f"input tokens {res.usage.input_tokens} after {first.usage}")
    return {"input_tokens": res.usage.input_tokens}


@check("responses.tools")
def _():
    tool = {
        "type": "function",
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 12}},
            "required": ["city"],
            "additionalProperties": False,
        },
    }
    res = client.responses.create(
        model=CHAT, input="Weather in Oslo?", tools=[tool], tool_choice="required", max_output_tokens=60
    )
    calls = [item for item in res.output if item.type == "function_call"]
    expect(len(calls) == 1 and calls[0].name == "get_weather", f"output {res.output}")
    args = json.loads(calls[0].arguments)
    back = client.responses.create(
        model=CHAT,
        previous_response_id=res.id,
        input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": '{"celsius": 3}'}],
        max_output_tokens=4,
    )
    expect(back.output[0].type == "message", f"answer {back.output}")
    return args


@check("responses.structured_output")
def _():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 16}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    res = client.responses.create(
        model=CHAT,
        input="Describe a person.",
        text={"format": {"type": "json_schema", "name": "person", "schema": schema, "strict": True}},
        max_output_tokens=200,
    )
    value = json.loads(res.output_text)
    expect(isinstance(value.get("name"), str) and isinstance(value.get("age"), int), f"value {value}")
    return value


@check("responses.background")
def _():
    res = client.responses.create(model=CHAT, input="Later, please.", background=True, max_output_tokens=6)
    expect(res.status == "queued" and res.background, f"status {res.status}")
    until = time.monotonic() + 30
    while res.status in ("queued", "in_progress"):
        expect(time.monotonic() < until, f"still {res.status}")
        time.sleep(0.05)
        res = client.responses.retrieve(res.id)
    expect(res.status == "incomplete" and res.output_text, f"ended {res.status}")
    return {"status": res.status}


@check("responses.delete")
def _():
    made_response = needs("response")
    deleted = client.responses.delete(made_response.id)
    try:
        client.responses.retrieve(made_response.id)
    except openai.NotFoundError:
        return {"deleted": str(deleted)}
    raise AssertionError("still retrievable after delete")


sys.exit(exit_status())
