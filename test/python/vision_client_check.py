"""Sends images to a running Conveyor platform with the official Python `openai` client, as a new user would.

Each check prints one JSON line, {"check": name, "ok": true/false, "detail": ...}; a failing check never
stops the ones after it. The exit status is 1 when any check failed. The images are small PNGs made here.

Environment:
  CONVEYOR_BASE_URL           the platform's OpenAI base URL, e.g. http://127.0.0.1:8080/v1
  CONVEYOR_VISION_MODEL       a deployment with a vision projector
  CONVEYOR_TEXT_MODEL         a deployment that reads text only
  CONVEYOR_IMAGE_MAX_BYTES    the platform's IMAGE_MAX_BYTES
  OPENAI_API_KEY              optional; any value works where no keys are configured
"""

import base64
import json
import os
import struct
import sys
import time
import zlib

import openai
from checks import check, exit_status, expect

BASE_URL = os.environ["CONVEYOR_BASE_URL"]
VISION = os.environ["CONVEYOR_VISION_MODEL"]
TEXT = os.environ["CONVEYOR_TEXT_MODEL"]
IMAGE_MAX_BYTES = int(os.environ["CONVEYOR_IMAGE_MAX_BYTES"])

client = openai.OpenAI(
    base_url=BASE_URL, api_key=os.environ.get("OPENAI_API_KEY") or "unused", max_retries=0, timeout=120
)


def png(width, height, pixel):
    """A truecolour PNG; `pixel(x, y)` gives each pixel's three bytes."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"".join(pixel(x, y) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def data_uri(image, mime="image/png"):
    return f"data:{mime};base64,{base64.b64encode(image).decode()}"


def image_part(image):
    return {"type": "image_url", "image_url": {"url": data_uri(image)}}


RED = png(8, 8, lambda x, y: b"\xff\x00\x00")
CHECKER = png(8, 8, lambda x, y: b"\xff\xff\xff" if (x + y) % 2 else b"\x00\x00\x00")
GRADIENT = png(8, 8, lambda x, y: bytes((x * 32, y * 32, 128)))
QUESTION = {"type": "text", "text": "What is in this picture?"}


def ask(content, model=VISION, **extra):
    return client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": content}], max_tokens=8, **extra
    )


def status_error(call):
    """The APIStatusError that `call` raises; fails the check when it raises none."""
    try:
        call()
    except openai.APIStatusError as e:
        return e
    raise AssertionError("expected an error status, got an answer")


def error_fields(e):
    body = e.body if isinstance(e.body, dict) else {}
    error = body.get("error", body)
    return {"status": e.status_code, "code": error.get("code"), "param": error.get("param"), "type": error.get("type")}


# What the same question costs without an image: an image's prompt tokens come on top.
text_only_tokens = ask([QUESTION]).usage.prompt_tokens


@check("vision.sync")
def _():
    reply = ask([image_part(RED), QUESTION])
    choice = reply.choices[0]
    expect(isinstance(choice.message.content, str), f"no text in {choice.message}")
    expect(choice.finish_reason in ("stop", "length"), f"finish_reason {choice.finish_reason}")
    image_tokens = reply.usage.prompt_tokens - text_only_tokens
    expect(image_tokens > 0, f"the image cost no prompt tokens ({reply.usage.prompt_tokens} vs {text_only_tokens})")
    return {"prompt_tokens": reply.usage.prompt_tokens, "image_tokens": image_tokens}


@check("vision.several_images_before_text")
def _():
    one = ask([image_part(RED), QUESTION]).usage.prompt_tokens
    three = ask([image_part(RED), image_part(CHECKER), image_part(GRADIENT), QUESTION]).usage.prompt_tokens
    # Each image costs the same number of tokens at this size: three cost three times one.
    expect(three - text_only_tokens == 3 * (one - text_only_tokens), f"3 images {three}, 1 image {one}")
    return {"one_image": one, "three_images": three}


@check("vision.stream")
def _():
    stream = ask([image_part(CHECKER), QUESTION], stream=True, stream_options={"include_usage": True})
    text, finish, usage, roles = "", None, None, 0
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            roles += 1 if choice.delta.role else 0
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    expect(roles == 1, f"{roles} role chunks")
    expect(finish in ("stop", "length"), f"finish_reason {finish}")
    expect(usage is not None and usage.prompt_tokens > text_only_tokens, f"usage {usage}")
    return {"chars": len(text), "finish_reason": finish}


@check("vision.batch")
def _():
    lines = []
    for i, image in enumerate([RED, CHECKER, GRADIENT]):
        body = {"model": VISION, "messages": [{"role": "user", "content": [image_part(image), QUESTION]}], "max_tokens": 4}
        lines.append(json.dumps({"custom_id": f"image-{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}))
    upload = client.files.create(file=("images.jsonl", ("\n".join(lines) + "\n").encode()), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    until = time.monotonic() + 120
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        expect(time.monotonic() < until, f"batch still {batch.status}")
        time.sleep(0.3)
        batch = client.batches.retrieve(batch.id)
    expect(batch.status == "completed", f"batch {batch.status}: {batch.errors}")
    expect(batch.request_counts.completed == 3, f"counts {batch.request_counts}")
    results = [json.loads(line) for line in client.files.content(batch.output_file_id).text.splitlines() if line]
    expect(sorted(r["custom_id"] for r in results) == ["image-0", "image-1", "image-2"], f"{results}")
    for r in results:
        usage = r["response"]["body"]["usage"]
        expect(r["response"]["status_code"] == 200 and usage["prompt_tokens"] > text_only_tokens, f"{r}")
    return {"lines": len(results)}


@check("vision.corrupt_image")
def _():
    # Bytes that are no image at all: refused by the API before anything is queued.
    garbage = error_fields(status_error(lambda: ask([{"type": "image_url", "image_url": {"url": data_uri(b"not an image")}}, QUESTION])))
    expect(garbage["status"] == 400 and garbage["param"] == "messages[0].content[0].image_url.url", f"{garbage}")
    # A PNG whose header is whole but whose pixels are cut off: refused by the engine, as a 400 too.
    truncated = RED[: len(RED) - 20]
    cut = error_fields(status_error(lambda: ask([QUESTION, image_part(truncated)])))
    expect(cut["status"] == 400 and cut["type"] == "invalid_request_error", f"{cut}")
    # And the deployment keeps serving.
    after = ask([image_part(GRADIENT), QUESTION])
    expect(after.usage.prompt_tokens > text_only_tokens, f"after a corrupt image: {after.usage}")
    return {"garbage": garbage, "truncated": cut}


@check("vision.oversized_image")
def _():
    # Pixels that do not compress: a PNG over the byte cap.
    side = 8
    while side * side * 3 < IMAGE_MAX_BYTES * 1.2:
        side *= 2
    noise = png(side, side, lambda x, y: os.urandom(3))
    expect(len(noise) > IMAGE_MAX_BYTES, f"the noise PNG is only {len(noise)} bytes")
    e = error_fields(status_error(lambda: ask([QUESTION, image_part(noise)])))
    expect(e["status"] == 413 and e["code"] == "image_too_large" and e["param"] == "messages[0].content[1].image_url.url", f"{e}")
    return {"bytes": len(noise), **e}


@check("vision.text_only_deployment_refuses")
def _():
    e = error_fields(status_error(lambda: ask([image_part(RED), QUESTION], model=TEXT)))
    expect(e["status"] == 400 and e["code"] == "model_not_supported" and e["param"] == "messages[0].content[0].type", f"{e}")
    return e


sys.exit(exit_status())
