#!/usr/bin/env python3
"""Writes axes.pb, the value `cgc --bind axes=axes.pb` fixes the model's
`axes` input to: a serialized ONNX TensorProto (int64 [1] = {1})."""
from pathlib import Path

import numpy as np
from onnx import numpy_helper

tensor = numpy_helper.from_array(np.array([1], np.int64), name="axes")
(Path(__file__).parent / "axes.pb").write_bytes(tensor.SerializeToString())
