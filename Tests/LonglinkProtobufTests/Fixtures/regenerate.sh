#!/usr/bin/env bash
# Rebuilds every <name>.bin in this directory from <name>.txtpb with protoc's own text-format encoder
# (protoc-c embeds libprotoc), independently of ProtobufFrameCodec. Run from anywhere:
#   Tests/LonglinkProtobufTests/Fixtures/regenerate.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
for txt in "$here"/*.txtpb; do
    message="$(sed -n 's/^# proto-message: //p' "$txt" | head -1)"
    protoc-c --proto_path="$root/proto" --encode="$message" longlink/v1/frames.proto < "$txt" > "${txt%.txtpb}.bin"
    echo "$(basename "${txt%.txtpb}.bin"): $message, $(stat -c %s "${txt%.txtpb}.bin") bytes"
done
