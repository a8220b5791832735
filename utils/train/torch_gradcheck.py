"""Every gradient rule's package on the GPU against torch autograd (issue 16:
"gradients match ... torch autograd on the GPU (rel. 1e-4, fp32)").

The cases are test/Training/gradcheck.py's (the finite-difference half): one
ONNX node per case whose float inputs are all initializers, so that
`cgc --train` differentiates with respect to every one of them; the loss is
the mean squared difference with a fixed label. Here each model is built in
float32 and compiled to a package with `--optimizer=none`, whose step
returns the loss and `grad.NAME` per trained initializer. torch builds the
same op from its functional equivalents on the same values, takes
F.mse_loss against the same label and runs backward (TF32 off). Per case:
the loss's relative difference (<= 1e-5) and per gradient
||g_cgc - g_torch|| / ||g_torch|| (L2, <= 1e-4).

Two halves, since the compiler and the GPU are on different machines:

  prepare (here: numpy and onnx, no torch, no GPU)
      torch_gradcheck.py prepare --cgc build/bin/cgc --out DIR
    writes DIR/models/NAME.onnx, the package DIR/pkgs/NAME (without its
    kernels.cu and model.cpp sources), the package's inputs
    DIR/inputs/NAME/INPUT.npy (the label), the node's inputs
    DIR/values/NAME/{pN,cN}.npy, cgc-interp's float32 loss and gradients
    DIR/interp/NAME/*.npy, and DIR/cases.json. A case that does not compile,
    or whose op has no torch form here, is listed with its reason.

  run (the GPU machine: torch, numpy, the cgc package and CGC_RUNTIME_LIB)
      torch_gradcheck.py run --dir DIR --out FILE.json
    prints `NAME: loss rel X, worst grad rel Y (which) ok|FAIL` per case and
    `torch_gradcheck: N of M within 1e-4`; exits 1 unless all M pass.
    `--device cpu --cgc-source interp` compares torch on the CPU with
    cgc-interp's float32 gradients instead (checks the torch side without a
    GPU).

  selftest (numpy and onnx): the torch-free geometry (pool windows and
    divisors, Slice bounds, Reshape/Gather index rules) against ONNX's
    reference evaluator on the cases' own nodes.
"""
import argparse
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRADCHECK = os.path.join(ROOT, "test", "Training", "gradcheck.py")

LOSS_RTOL = 1e-5
GRAD_RTOL = 1e-4
# Package sources the runtime does not read (it loads libmodel.so, the
# cubin or the PTX, metadata.json and weights.bin).
SOURCES = ("kernels.cu", "model.cpp")
# Labels are drawn apart from gradcheck.py's generator, so importing it
# leaves its CASES exactly as the finite-difference test sees them.
LABEL_SEED = 16


def load_gradcheck():
    """test/Training/gradcheck.py as a module (it is no package)."""
    spec = importlib.util.spec_from_file_location("gradcheck", GRADCHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# Torch-free ONNX geometry (used by the torch ops below; selftest checks it)
# ---------------------------------------------------------------------------

def split_pads(pads, rank):
    """ONNX pads [b1, b2, ..., e1, e2, ...] -> (begins, ends)."""
    pads = list(pads) if pads else [0] * (2 * rank)
    return pads[:rank], pads[rank:]


def torch_pad_arg(begins, ends):
    """F.pad's argument: (begin, end) pairs from the last dim backwards."""
    arg = []
    for b, e in zip(reversed(begins), reversed(ends)):
        arg += [b, e]
    return tuple(arg)


def pool_geometry(sizes, kernel, strides, pads, dilations, ceil_mode):
    """ONNX pooling's windows along each spatial dim: the output sizes, and
    the pads to put on each side so that a floor-mode pool without padding
    computes exactly those windows first (ceil mode may need more at the
    end). ceil_mode drops a last window that would start past the input and
    its begin pad (ONNX's reference, as PyTorch)."""
    rank = len(sizes)
    strides = strides or [1] * rank
    dilations = dilations or [1] * rank
    begins, ends = split_pads(pads, rank)
    outs, ends_needed = [], []
    for n, k, s, d, b, e in zip(sizes, kernel, strides, dilations, begins,
                                ends):
        span = d * (k - 1) + 1
        room = n + b + e - span
        out = (-(-room // s) if ceil_mode else room // s) + 1
        if ceil_mode and (out - 1) * s >= n + b:
            out -= 1
        outs.append(out)
        ends_needed.append(max(e, (out - 1) * s + span - n - b))
    return outs, begins, ends_needed


def pool_divisor(sizes, kernel, strides, pads, dilations, ceil_mode,
                 count_include_pad):
    """AveragePool's divisor per output position: the window's taps inside
    the input (count_include_pad 0) or inside the input and its declared
    pads (1), never the taps ceil mode adds past the end pad."""
    outs, begins, _ = pool_geometry(sizes, kernel, strides, pads, dilations,
                                    ceil_mode)
    _, ends = split_pads(pads, len(sizes))
    strides = strides or [1] * len(sizes)
    dilations = dilations or [1] * len(sizes)
    divisor = np.ones(outs)
    for axis, (n, k, s, d, b, e, out) in enumerate(
            zip(sizes, kernel, strides, dilations, begins, ends, outs)):
        # Positions are in the padded frame: the input is [b, b + n).
        low, high = (0, b + n + e) if count_include_pad else (b, b + n)
        taps = np.array([sum(low <= o * s + t * d < high for t in range(k))
                         for o in range(out)], dtype=np.float64)
        shape = [1] * len(sizes)
        shape[axis] = out
        divisor = divisor * taps.reshape(shape)
    return divisor


def slice_bounds(dim, start, end, step):
    """ONNX Slice's clamped (start, end) for a positive step, as Python's
    slice takes them."""
    if step <= 0:
        raise Unsupported("Slice with a step of %d (torch slices need a "
                          "positive step)" % step)
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    return min(max(start, 0), dim), min(max(end, 0), dim)


def reshape_target(in_shape, shape, allowzero=0):
    """ONNX Reshape's shape with its 0s (copy the input's dim, unless
    allowzero) resolved; -1 is left to torch."""
    return [in_shape[k] if d == 0 and not allowzero else int(d)
            for k, d in enumerate(shape)]


def gather_shape(data_shape, index_shape, axis):
    return (list(data_shape[:axis]) + list(index_shape) +
            list(data_shape[axis + 1:]))


class Unsupported(Exception):
    """An op or attribute this script has no torch form for."""


# ---------------------------------------------------------------------------
# prepare: float32 models, packages, inputs and cgc-interp's references
# ---------------------------------------------------------------------------

def float32_attrs(op, attrs):
    """The case's attributes for the float32 model: cast_folded's and
    cast_widening's Cast is to the model's own type, which is float now."""
    attrs = dict(attrs)
    if op == "Cast" and attrs.get("to") == 11:  # TensorProto.DOUBLE
        attrs["to"] = 1  # TensorProto.FLOAT
    # The finite-difference settings of a float64 case (cast_widening's
    # float32 initializer, step and grid) do not apply to float32 models.
    for key in ("_init_dtype", "_step", "_direction_grid"):
        attrs.pop(key, None)
    return attrs


def json_attrs(attrs):
    """The node's attributes as JSON values (numpy scalars to Python)."""
    out = {}
    for key, value in attrs.items():
        if isinstance(value, (list, tuple)):
            value = [v.item() if isinstance(v, np.generic) else v
                     for v in value]
        elif isinstance(value, np.generic):
            value = value.item()
        out[key] = value
    return out


def tool(cmd):
    """Runs a compiler tool; returns None or its error text."""
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode:
        return (result.stderr or result.stdout).strip() or \
            "exit code %d" % result.returncode
    return None


def torch_form_refusal(op, attrs):
    """Why run mode cannot build this node in torch, or "" (checked before
    compiling, so that prepare lists such cases)."""
    if op not in TORCH_OPS:
        return "no torch form for %s in torch_gradcheck.py" % op
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        return "auto_pad %s (only explicit pads)" % attrs["auto_pad"]
    if op == "AveragePool" and any(d != 1 for d in attrs.get("dilations",
                                                             [])):
        return "AveragePool with dilations (torch's avg_pool has none)"
    return ""


def prepare_case(gc, name, case, args):
    """Writes one case's files; returns its cases.json record."""
    op, floats, ints, attrs = case
    attrs = float32_attrs(op, attrs)
    record = {"name": name, "op": op}
    refusal = torch_form_refusal(op, attrs)
    if refusal:
        return dict(record, status="refused", reason=refusal)
    import onnx  # here, not at the top: run mode needs no onnx
    from onnx import numpy_helper
    model = gc.build_model(name, op, floats, ints, attrs, np.float32)
    node = model.graph.node[0]
    y_shape = [d.dim_value for d in
               model.graph.output[0].type.tensor_type.shape.dim]
    paths = {key: os.path.join(args.out, key, name)
             for key in ("values", "inputs", "interp")}
    for path in paths.values():
        os.makedirs(path, exist_ok=True)
    model_path = os.path.join(args.out, "models", name + ".onnx")
    onnx.save(model, model_path)

    # The node's inputs, in its order, as torch will take them.
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    inputs = []
    for input_name in node.input:
        value = inits[input_name]
        np.save(os.path.join(paths["values"], input_name + ".npy"), value)
        entry = {"name": input_name, "dtype": str(value.dtype),
                 "shape": list(value.shape),
                 "file": os.path.join("values", name, input_name + ".npy"),
                 "trained": value.dtype == np.float32}
        if not entry["trained"]:
            # Reshape's shape, Gather's indices, Where's condition.
            entry["value"] = value.tolist()
        inputs.append(entry)

    rng = np.random.default_rng([LABEL_SEED] + list(name.encode()))
    label = rng.uniform(-1.0, 1.0, size=y_shape).astype(np.float32)
    np.save(os.path.join(paths["inputs"], "label.npy"), label)

    # Every float operand, BatchNormalization's statistics included (cgc
    # trains those only when named).
    trainable = "--trainable=" + ",".join(
        e["name"] for e in inputs if e["trained"] and
        e["name"] in gc.trainable_names(floats, attrs))
    package = os.path.join(args.out, "pkgs", name)
    shutil.rmtree(package, ignore_errors=True)
    error = tool([args.cgc, model_path, "--train", "--loss=mse",
                  "--optimizer=none", trainable, "-o", package])
    if error:
        return dict(record, status="refused",
                    reason="cgc cannot compile it in float32: " + error)
    for source in SOURCES:
        path = os.path.join(package, source)
        if os.path.exists(path):
            os.remove(path)
    with open(os.path.join(package, "metadata.json")) as f:
        meta = json.load(f)
    package_inputs = [t["name"] for t in meta["inputs"]]
    grads = [t["name"][len("grad."):] for t in meta["outputs"]
             if t["name"].startswith("grad.")]
    missing = [t for t in package_inputs
               if not os.path.exists(os.path.join(paths["inputs"],
                                                  t + ".npy"))]
    if missing:
        return dict(record, status="refused",
                    reason="the package needs inputs %s, which the case "
                    "does not have" % ", ".join(missing))

    interp = None
    if args.interp:
        error = tool([args.interp, model_path, "--train", "--optimizer=none",
                      trainable, "--inputs", paths["inputs"], "--outputs",
                      paths["interp"]])
        if error:
            print("%s: cgc-interp failed (no interpreter reference): %s" %
                  (name, error))
        else:
            interp = os.path.join("interp", name)

    extra = {"attrs": json_attrs(attrs), "inputs": inputs,
             "outputs": len(node.output), "y_shape": y_shape,
             "label": os.path.join("inputs", name, "label.npy"),
             "package": os.path.join("pkgs", name),
             "package_inputs": {t: os.path.join("inputs", name, t + ".npy")
                                for t in package_inputs},
             "grads": grads, "interp": interp}
    return dict(record, status="ready", **extra)


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(path) for f in files)


def prepare(args):
    gc = load_gradcheck()
    if args.interp is None:
        guess = os.path.join(os.path.dirname(args.cgc), "cgc-interp")
        args.interp = guess if os.path.exists(guess) else ""
    for sub in ("models", "pkgs", "inputs", "values", "interp"):
        shutil.rmtree(os.path.join(args.out, sub), ignore_errors=True)
        os.makedirs(os.path.join(args.out, sub))
    records = []
    for name, case in gc.CASES.items():
        try:
            record = prepare_case(gc, name, case, args)
        except Exception as e:  # listed, never skipped
            record = {"name": name, "op": case[0], "status": "refused",
                      "reason": "%s: %s" % (type(e).__name__, e)}
        records.append(record)
        if record["status"] == "ready":
            print("%s: ready (%s, gradients %s)" % (
                name, record["op"], ", ".join(record["grads"])))
        else:
            print("%s: REFUSED (%s): %s" % (name, record["op"],
                                           record["reason"]))
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump({"cases": records, "loss_rtol": LOSS_RTOL,
                   "grad_rtol": GRAD_RTOL}, f, indent=1)
    ready = sum(r["status"] == "ready" for r in records)
    size = folder_bytes(args.out)
    print("torch_gradcheck prepare: %d of %d cases ready, %s: %.2f MB" % (
        ready, len(records), args.out, size / 1e6))
    return 0 if ready == len(records) else 1


# ---------------------------------------------------------------------------
# run: the torch forms of the ONNX ops (torch is imported by run only)
# ---------------------------------------------------------------------------

torch = None
F = None


def import_torch():
    global torch, F
    import torch as torch_module
    torch = torch_module
    F = torch.nn.functional


def _unary(name):
    return lambda ins, a, case: getattr(torch, name)(ins[0])


def op_gelu(ins, a, case):
    return F.gelu(ins[0], approximate=a.get("approximate", "none"))


def op_clip(ins, a, case):
    # The bounds are optional inputs (an absent one is no bound).
    low = ins[1] if len(ins) > 1 and ins[1] is not None else None
    high = ins[2] if len(ins) > 2 and ins[2] is not None else None
    return torch.clamp(ins[0], min=low, max=high)


def op_gemm(ins, a, case):
    x, w = ins[0], ins[1]
    if a.get("transA", 0):
        x = x.t()
    if a.get("transB", 0):
        w = w.t()
    y = a.get("alpha", 1.0) * (x @ w)
    if len(ins) > 2 and ins[2] is not None:
        y = y + a.get("beta", 1.0) * ins[2]
    return y


def op_transpose(ins, a, case):
    perm = a.get("perm") or list(reversed(range(ins[0].dim())))
    return ins[0].permute(*perm)


def op_reshape(ins, a, case):
    shape = case_value(case, 1)
    return ins[0].reshape(reshape_target(list(ins[0].shape), shape,
                                         a.get("allowzero", 0)))


def op_expand(ins, a, case):
    # ONNX's Expand broadcasts both ways (a target dim of 1 keeps x's).
    shape = torch.broadcast_shapes(tuple(ins[0].shape),
                                   tuple(case_value(case, 1)))
    return ins[0].expand(shape)


def reduce_axes(ins, a, case, rank):
    """The axes of ReduceSum/ReduceMean: an input from opsets 13/18 on, an
    attribute before; none means all (unless noop_with_empty_axes)."""
    if len(case["inputs"]) > 1:
        axes = case_value(case, 1)
    else:
        axes = a.get("axes", [])
    if not axes:
        return None if a.get("noop_with_empty_axes", 0) else list(range(rank))
    return [int(k) for k in axes]


def _reduce(name):
    def op(ins, a, case):
        axes = reduce_axes(ins, a, case, ins[0].dim())
        if axes is None:
            return ins[0]
        return getattr(torch, name)(ins[0], dim=tuple(axes),
                                    keepdim=bool(a.get("keepdims", 1)))
    return op


def op_layer_norm(ins, a, case):
    x = ins[0]
    axis = a.get("axis", -1) % x.dim()
    shape = tuple(x.shape[axis:])
    scale = ins[1]
    bias = ins[2] if len(ins) > 2 else None
    if tuple(scale.shape) != shape or (bias is not None and
                                       tuple(bias.shape) != shape):
        raise Unsupported("LayerNormalization with a broadcast scale or bias")
    return F.layer_norm(x, shape, scale, bias, a.get("epsilon", 1e-5))


def op_split(ins, a, case):
    x, axis = ins[0], a.get("axis", 0)
    if len(case["inputs"]) > 1:
        sizes = [int(v) for v in case_value(case, 1)]
    else:
        # Equal pieces, the last one smaller (opset 18's num_outputs).
        count = a.get("num_outputs", case["outputs"])
        sizes = -(-x.shape[axis] // count)
    return torch.split(x, sizes, dim=axis)[0]


def op_slice(ins, a, case):
    x = ins[0]
    starts, ends = case_value(case, 1), case_value(case, 2)
    axes = case_value(case, 3) if len(case["inputs"]) > 3 else \
        list(range(len(starts)))
    steps = case_value(case, 4) if len(case["inputs"]) > 4 else \
        [1] * len(starts)
    index = [slice(None)] * x.dim()
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis % x.dim()
        low, high = slice_bounds(x.shape[axis], start, end, step)
        index[axis] = slice(low, high, step)
    return x[tuple(index)]


def op_gather(ins, a, case):
    x, index = ins[0], ins[1]
    axis = a.get("axis", 0) % x.dim()
    # Negative indices count from the end of the axis.
    flat = index.reshape(-1)
    flat = torch.where(flat < 0, flat + x.shape[axis], flat)
    picked = torch.index_select(x, axis, flat)
    return picked.reshape(gather_shape(list(x.shape), list(index.shape),
                                       axis))


def op_conv(ins, a, case):
    x, w = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    rank = w.dim() - 2
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}.get(rank)
    if conv is None:
        raise Unsupported("Conv of %d spatial dims" % rank)
    begins, ends = split_pads(a.get("pads"), rank)
    # torch pads both sides alike: asymmetric ONNX pads go through F.pad.
    padding = begins
    if begins != ends:
        x = F.pad(x, torch_pad_arg(begins, ends))
        padding = [0] * rank
    return conv(x, w, bias, stride=a.get("strides", [1] * rank),
                padding=padding, dilation=a.get("dilations", [1] * rank),
                groups=a.get("group", 1))


def padded_for_pool(x, a, value):
    """x padded by ONNX's pads (and ceil mode's extra end) with value, and
    the pooling geometry, so that a floor-mode torch pool without padding
    computes ONNX's windows first."""
    rank = x.dim() - 2
    kernel = a["kernel_shape"]
    outs, begins, ends = pool_geometry(list(x.shape[2:]), kernel,
                                       a.get("strides"), a.get("pads"),
                                       a.get("dilations"),
                                       a.get("ceil_mode", 0))
    x = F.pad(x, torch_pad_arg(begins, ends), value=value)
    return x, rank, kernel, a.get("strides") or [1] * rank, outs


def crop(y, outs):
    """The first outs windows along each spatial dim."""
    if list(y.shape[2:]) != list(outs):
        y = y[(slice(None), slice(None)) + tuple(slice(0, n) for n in outs)]
    return y


def op_max_pool(ins, a, case):
    # The pads hold -inf: a padded tap never is a window's maximum.
    x, rank, kernel, strides, outs = padded_for_pool(ins[0], a,
                                                     float("-inf"))
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[rank]
    y = pool(x, kernel, strides, padding=0,
             dilation=a.get("dilations") or [1] * rank, ceil_mode=False)
    return crop(y, outs)


def op_average_pool(ins, a, case):
    # Window sums over zero pads (torch's mean of full windows times the
    # window's size), divided by ONNX's count of taps.
    sizes = list(ins[0].shape[2:])
    x, rank, kernel, strides, outs = padded_for_pool(ins[0], a, 0.0)
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[rank]
    sums = crop(pool(x, kernel, strides, padding=0, ceil_mode=False,
                     count_include_pad=True), outs) * math.prod(kernel)
    divisor = pool_divisor(sizes, kernel, strides, a.get("pads"),
                           a.get("dilations"), a.get("ceil_mode", 0),
                           a.get("count_include_pad", 0))
    return sums / torch.tensor(divisor, dtype=sums.dtype, device=sums.device)


def op_global_average_pool(ins, a, case):
    return ins[0].mean(dim=tuple(range(2, ins[0].dim())), keepdim=True)


def op_batch_norm(ins, a, case):
    x, scale, bias, mean, var = ins
    eps = a.get("epsilon", 1e-5)
    if a.get("training_mode", 0):
        # The batch's own statistics (biased variance), as torch trains;
        # the running mean and variance do not reach Y.
        return F.batch_norm(x, None, None, scale, bias, training=True,
                            eps=eps)
    # Inference with the running statistics, written out: F.batch_norm
    # treats them as buffers without gradients, cgc trains all five.
    shape = [1, -1] + [1] * (x.dim() - 2)
    return ((x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + eps)
            * scale.reshape(shape) + bias.reshape(shape))


ONNX_TO_TORCH_DTYPE = {1: "float32", 11: "float64", 10: "float16",
                       16: "bfloat16"}


def op_cast(ins, a, case):
    name = ONNX_TO_TORCH_DTYPE.get(a["to"])
    if name is None:
        raise Unsupported("Cast to ONNX type %d" % a["to"])
    return ins[0].to(getattr(torch, name))


TORCH_OPS = {
    "Add": lambda ins, a, case: ins[0] + ins[1],
    "Sub": lambda ins, a, case: ins[0] - ins[1],
    "Mul": lambda ins, a, case: ins[0] * ins[1],
    "Div": lambda ins, a, case: ins[0] / ins[1],
    "Pow": lambda ins, a, case: torch.pow(ins[0], ins[1]),
    "Neg": lambda ins, a, case: -ins[0],
    "Relu": _unary("relu"),
    "Sigmoid": _unary("sigmoid"),
    "Tanh": _unary("tanh"),
    "Exp": _unary("exp"),
    "Log": _unary("log"),
    "Sqrt": _unary("sqrt"),
    "Reciprocal": _unary("reciprocal"),
    "Abs": _unary("abs"),
    "Erf": _unary("erf"),
    "Gelu": op_gelu,
    "Clip": op_clip,
    "MatMul": lambda ins, a, case: torch.matmul(ins[0], ins[1]),
    "Gemm": op_gemm,
    "Transpose": op_transpose,
    "Reshape": op_reshape,
    "Expand": op_expand,
    "ReduceSum": _reduce("sum"),
    "ReduceMean": _reduce("mean"),
    "Softmax": lambda ins, a, case: torch.softmax(ins[0], a.get("axis", -1)),
    "LogSoftmax": lambda ins, a, case: torch.log_softmax(ins[0],
                                                         a.get("axis", -1)),
    "LayerNormalization": op_layer_norm,
    "Concat": lambda ins, a, case: torch.cat(ins, dim=a["axis"]),
    "Split": op_split,
    "Slice": op_slice,
    "Gather": op_gather,
    "Where": lambda ins, a, case: torch.where(ins[0], ins[1], ins[2]),
    "Conv": op_conv,
    "MaxPool": op_max_pool,
    "AveragePool": op_average_pool,
    "GlobalAveragePool": op_global_average_pool,
    "BatchNormalization": op_batch_norm,
    "Cast": op_cast,
}


def case_value(case, index):
    """The constant (integer or boolean) node input at index, as a list."""
    return case["inputs"][index]["value"]


def torch_inputs(case, folder, device):
    """The node's inputs as torch tensors: the trained ones as leaves that
    take gradients, the constants as they are."""
    ins = []
    for entry in case["inputs"]:
        value = torch.from_numpy(np.load(os.path.join(folder,
                                                      entry["file"])))
        value = value.to(device)
        if entry["trained"]:
            value.requires_grad_(True)
        ins.append(value)
    return ins


def torch_loss_and_grads(case, folder, device):
    """torch's loss and the gradient of every trained input (zeros for one
    the loss does not depend on)."""
    ins = torch_inputs(case, folder, device)
    y = TORCH_OPS[case["op"]](ins, case["attrs"], case)
    if list(y.shape) != list(case["y_shape"]):
        raise RuntimeError("torch's output is %s, the model's %s" % (
            list(y.shape), case["y_shape"]))
    label = torch.from_numpy(np.load(os.path.join(folder, case["label"])))
    loss = F.mse_loss(y, label.to(device=device, dtype=y.dtype))
    loss.backward()
    grads = {}
    for entry, value in zip(case["inputs"], ins):
        if entry["trained"]:
            grad = value.grad if value.grad is not None else \
                torch.zeros_like(value)
            grads[entry["name"]] = grad.detach().cpu().numpy()
    return float(loss.item()), grads


def cgc_package_loss_and_grads(case, folder):
    """The package's one step on the GPU: its outputs are the loss and
    grad.NAME per trained initializer (--optimizer=none)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import cgc
    model = cgc.Model(os.path.join(folder, case["package"]))
    try:
        feeds = {name: np.load(os.path.join(folder, path))
                 for name, path in case["package_inputs"].items()}
        outs = model.run(feeds, output="numpy")
    finally:
        model.close()
    return unpack_outputs(outs)


def cgc_interp_loss_and_grads(case, folder):
    """cgc-interp's float32 outputs, saved by prepare."""
    path = os.path.join(folder, case["interp"] or "")
    if not case["interp"] or not os.path.isdir(path):
        raise RuntimeError("prepare saved no cgc-interp outputs for it")
    return unpack_outputs({f[:-len(".npy")]: np.load(os.path.join(path, f))
                           for f in os.listdir(path) if f.endswith(".npy")})


def unpack_outputs(outs):
    grads = {k[len("grad."):]: np.asarray(v) for k, v in outs.items()
             if k.startswith("grad.")}
    return float(np.asarray(outs["loss"])), grads


def rel_l2(got, want):
    """||got - want|| / ||want|| in float64; the absolute norm where want is
    all zeros (a gradient that must vanish)."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        return math.inf
    diff = float(np.linalg.norm(got - want))
    scale = float(np.linalg.norm(want))
    return diff / scale if scale > 0 else diff


def compare(case, cgc_loss, cgc_grads, torch_loss, torch_grads):
    """The case's result: the loss's and every gradient's relative
    difference. A trained input cgc gives no gradient for (Clip's bounds)
    is listed with torch's norm, not failed: the rule documents it."""
    loss_rel = abs(cgc_loss - torch_loss) / max(abs(torch_loss), 1e-30)
    grads, missing = {}, {}
    for name, want in torch_grads.items():
        if name in cgc_grads:
            grads[name] = {"rel": rel_l2(cgc_grads[name], want),
                           "norm_torch": float(np.linalg.norm(want)),
                           "norm_cgc": float(np.linalg.norm(cgc_grads[name]))}
        else:
            missing[name] = float(np.linalg.norm(want))
    extra = sorted(set(cgc_grads) - set(torch_grads))
    worst = max(grads, key=lambda k: grads[k]["rel"]) if grads else None
    worst_rel = grads[worst]["rel"] if worst else math.inf
    ok = (loss_rel <= LOSS_RTOL and worst_rel <= GRAD_RTOL and not extra
          and bool(grads))
    return {"name": case["name"], "op": case["op"],
            "status": "ok" if ok else "FAIL", "loss_cgc": cgc_loss,
            "loss_torch": torch_loss, "loss_rel": loss_rel, "grads": grads,
            "worst": worst, "worst_rel": worst_rel,
            "no_cgc_grad": missing, "cgc_only_grads": extra}


def describe(result):
    """One line per case."""
    if result["status"] in ("refused", "error"):
        return "%s: %s: %s" % (result["name"], result["status"].upper(),
                               result["reason"])
    line = "%s: loss rel %.2e, worst grad rel %.2e (%s) %s" % (
        result["name"], result["loss_rel"], result["worst_rel"],
        result["worst"], result["status"])
    if result["no_cgc_grad"]:
        line += "; no cgc gradient for %s (torch's norm %s)" % (
            ", ".join(result["no_cgc_grad"]),
            ", ".join("%.2e" % v for v in result["no_cgc_grad"].values()))
    if result["cgc_only_grads"]:
        line += "; cgc-only gradients %s" % ", ".join(
            result["cgc_only_grads"])
    return line


def run_case(case, args):
    if case["status"] != "ready":
        return {"name": case["name"], "op": case["op"], "status": "refused",
                "reason": case["reason"]}
    try:
        if args.cgc_source == "package":
            cgc_loss, cgc_grads = cgc_package_loss_and_grads(case, args.dir)
        else:
            cgc_loss, cgc_grads = cgc_interp_loss_and_grads(case, args.dir)
        torch_loss, torch_grads = torch_loss_and_grads(case, args.dir,
                                                       args.device)
    except Exception as e:  # one case's trouble must not hide the others
        return {"name": case["name"], "op": case["op"], "status": "error",
                "reason": "%s: %s" % (type(e).__name__, e)}
    result = compare(case, cgc_loss, cgc_grads, torch_loss, torch_grads)
    if args.cgc_source == "package" and case.get("interp"):
        # Not judged: how far the GPU package is from the interpreter.
        try:
            interp_loss, interp_grads = cgc_interp_loss_and_grads(case,
                                                                  args.dir)
            result["package_vs_interp_worst_rel"] = max(
                [rel_l2(cgc_grads.get(k), v) for k, v in interp_grads.items()]
                or [0.0])
        except Exception as e:
            result["package_vs_interp_error"] = str(e)
    return result


def run(args):
    import_torch()
    if args.device.startswith("cuda"):
        if not torch.cuda.is_available():
            print("torch_gradcheck: no CUDA device for torch")
            return 2
    # fp32 on both sides: no TF32 in torch's matmuls and convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(os.path.join(args.dir, "cases.json")) as f:
        cases = json.load(f)["cases"]
    if args.only:
        wanted = args.only.split(",")
        cases = [c for c in cases if c["name"] in wanted]
    results = []
    for case in cases:
        result = run_case(case, args)
        print(describe(result), flush=True)
        results.append(result)
    passed = sum(r["status"] == "ok" for r in results)
    print("torch_gradcheck: %d of %d within %g" % (passed, len(results),
                                                   GRAD_RTOL))
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "device": args.device,
                   "device_name": (torch.cuda.get_device_name()
                                   if args.device.startswith("cuda")
                                   else "cpu"),
                   "cgc_source": args.cgc_source, "loss_rtol": LOSS_RTOL,
                   "grad_rtol": GRAD_RTOL, "passed": passed,
                   "total": len(results), "cases": results}, f, indent=1,
                  default=float)
    return 0 if passed == len(results) else 1


# ---------------------------------------------------------------------------
# selftest: the torch-free geometry against ONNX's reference evaluator
# ---------------------------------------------------------------------------

def numpy_pool(x, a, kind):
    """The torch path of op_max_pool/op_average_pool in numpy: pad, floor-
    mode windows, crop, divide."""
    sizes = list(x.shape[2:])
    kernel, rank = a["kernel_shape"], len(a["kernel_shape"])
    outs, begins, ends = pool_geometry(sizes, kernel, a.get("strides"),
                                       a.get("pads"), a.get("dilations"),
                                       a.get("ceil_mode", 0))
    strides = a.get("strides") or [1] * rank
    dilations = a.get("dilations") or [1] * rank
    value = -np.inf if kind == "max" else 0.0
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(begins, ends)),
               constant_values=value)
    taps = []
    for offsets in np.ndindex(*kernel):
        index = (slice(None), slice(None)) + tuple(
            slice(t * d, t * d + (n - 1) * s + 1, s)
            for t, d, s, n in zip(offsets, dilations, strides, outs))
        taps.append(x[index])
    taps = np.stack(taps)
    if kind == "max":
        return taps.max(axis=0)
    return taps.sum(axis=0) / pool_divisor(
        sizes, kernel, a.get("strides"), a.get("pads"), a.get("dilations"),
        a.get("ceil_mode", 0), a.get("count_include_pad", 0))


def numpy_form(op, values, a):
    """numpy versions of the geometry-heavy torch forms."""
    if op == "MaxPool":
        return numpy_pool(values[0], a, "max")
    if op == "AveragePool":
        return numpy_pool(values[0], a, "avg")
    if op == "Slice":
        x = values[0]
        axes = values[3] if len(values) > 3 else range(len(values[1]))
        steps = values[4] if len(values) > 4 else [1] * len(values[1])
        index = [slice(None)] * x.ndim
        for start, end, axis, step in zip(values[1], values[2], axes, steps):
            low, high = slice_bounds(x.shape[axis], int(start), int(end),
                                     int(step))
            index[axis] = slice(low, high, int(step))
        return x[tuple(index)]
    if op == "Reshape":
        return values[0].reshape(reshape_target(list(values[0].shape),
                                                values[1]))
    if op == "Gather":
        axis = a.get("axis", 0) % values[0].ndim
        flat = values[1].reshape(-1)
        flat = np.where(flat < 0, flat + values[0].shape[axis], flat)
        return np.take(values[0], flat, axis=axis).reshape(
            gather_shape(values[0].shape, values[1].shape, axis))
    return None


def selftest(args):
    from onnx.reference import ReferenceEvaluator
    from onnx import numpy_helper
    gc = load_gradcheck()
    failures = checked = 0
    # The cases' own nodes, and pool geometries they lack: asymmetric pads
    # with ceil mode's extra end, 1-d, a last window dropped by ceil mode.
    cases = dict(gc.CASES)
    rng = np.random.default_rng(3)
    for k, (shape, attrs) in enumerate([
            ((1, 1, 7, 8), {"kernel_shape": [3, 2], "strides": [3, 3],
                            "pads": [0, 1, 2, 0], "ceil_mode": 1}),
            ((1, 2, 9), {"kernel_shape": [4], "strides": [2],
                         "pads": [3, 1], "ceil_mode": 1}),
            ((1, 1, 5, 5), {"kernel_shape": [2, 2], "strides": [2, 2],
                            "ceil_mode": 1})]):
        x = rng.uniform(-1, 1, size=shape)
        cases["extra_max%d" % k] = ("MaxPool", [x], [], attrs)
        for include in (0, 1):
            cases["extra_avg%d_%d" % (k, include)] = (
                "AveragePool", [x], [], dict(attrs,
                                             count_include_pad=include))
    for name, (op, floats, ints, attrs) in cases.items():
        model = gc.build_model(name, op, floats, ints, attrs)
        node = model.graph.node[0]
        inits = {i.name: numpy_helper.to_array(i)
                 for i in model.graph.initializer}
        values = [inits[n] for n in node.input]
        plain = {k: v for k, v in attrs.items() if not k.startswith("_")}
        got = numpy_form(op, values, plain)
        if got is None:
            continue
        want = ReferenceEvaluator(model).run(None, {})[0]
        checked += 1
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-12,
                                                     atol=1e-12)
        failures += not ok
        print("%s: %s %s" % (name, op, "ok" if ok else "FAIL (shape %s, "
                             "want %s)" % (got.shape, want.shape)))
    print("torch_gradcheck selftest: %d of %d geometries match ONNX's "
          "reference" % (checked - failures, checked))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("prepare", help="models, packages, inputs (no GPU)")
    p.add_argument("--cgc", required=True, help="the cgc binary")
    p.add_argument("--interp", default=None,
                   help="cgc-interp for reference gradients (default: next "
                   "to --cgc; '' for none)")
    p.add_argument("--out", required=True, help="the folder to write")
    r = sub.add_parser("run", help="packages against torch autograd")
    r.add_argument("--dir", required=True, help="prepare's folder")
    r.add_argument("--out", required=True, help="the JSON to write")
    r.add_argument("--device", default="cuda", help="torch's device")
    r.add_argument("--cgc-source", choices=("package", "interp"),
                   default="package",
                   help="cgc's gradients from the GPU package (default) or "
                   "from prepare's cgc-interp outputs")
    r.add_argument("--only", help="NAME,... of the cases to run")
    sub.add_parser("selftest", help="the torch-free geometry against ONNX's "
                   "reference evaluator")
    args = parser.parse_args()
    return {"prepare": prepare, "run": run, "selftest": selftest}[
        args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
