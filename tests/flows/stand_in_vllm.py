"""A stand-in for `vllm serve MODEL --served-model-name NAME` on loopback (tests only): it
refuses to start without MODEL/config.json, lists NAME under `/v1/models`, and answers chat
completions with the folder it serves and its port, so a test sees which version and
which server answered.

    python tests/flows/stand_in_vllm.py MODEL --served-model-name NAME --port 8000 [--load-s 2]

`--load-s` waits that long before it listens, as vLLM does while it loads the weights.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from hat_core.serving.arms import completion


def app(model: Path, name: str, port: int) -> Starlette:
    json.loads((model / "config.json").read_text())  # as vLLM, fail on a folder with no model

    async def models(request):
        return JSONResponse({"object": "list", "data": [{"id": name, "object": "model"}]})

    async def chat(request):
        body = await request.json()
        if body.get("model") != name:
            return JSONResponse({"error": {"message": f"model {body.get('model')} does not "
                                                      "exist", "type": "NotFoundError"}}, 404)
        answer = {"role": "assistant", "content": f"{model} on {port}"}
        return JSONResponse(completion(name, answer))
    return Starlette(routes=[Route("/v1/models", models),
                             Route("/v1/chat/completions", chat, methods=["POST"])])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("--served-model-name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--load-s", type=float, default=0.0)
    args = parser.parse_args()
    time.sleep(args.load_s)
    uvicorn.run(app(args.model, args.served_model_name, args.port), host="127.0.0.1",
                port=args.port, log_level="warning")
