"""Start one speech model behind an HTTP endpoint."""
import argparse

import uvicorn
from fastapi import FastAPI
from fastapi.responses import Response

from speech_server.backends.dia_tts import DiaTTS
from speech_server.config import Config


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()

    cfg = Config(model=args.model, device=args.device, host=args.host, port=args.port)
    backend = DiaTTS(cfg).load()

    app = FastAPI()

    @app.post("/v1/audio/speech")
    def speech(text: str):
        return Response(content=backend.speech(text).tobytes(), media_type="audio/wav")

    uvicorn.run(app, host=cfg.host, port=cfg.port)


if __name__ == "__main__":
    main()
