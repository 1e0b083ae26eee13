"""Transcribe every recording of a folder with Whisper large-v2, on the second GPU."""
import sys
from pathlib import Path

from faster_whisper import WhisperModel

# GPU 0 runs the diarisation service
model = WhisperModel("large-v2", device="cuda", device_index=1, compute_type="float16")

for audio in sorted(Path(sys.argv[1]).glob("*.wav")):
    segments, info = model.transcribe(str(audio), beam_size=5)
    with open(audio.with_suffix(".txt"), "w") as out:
        for seg in segments:
            out.write(f"[{seg.start:.2f} -> {seg.end:.2f}] {seg.text}\n")
    print(f"{audio.name}: {info.language} ({info.language_probability:.2f})")
