#!/usr/bin/env python3
"""A host that calls libnodeflow.so as LabVIEW's Call Library Function Node does:
ctypes only (no header, no C++), plain integers, pointers and strings, and
arrays the host allocates (numpy) before asking the library to fill them.

Usage: ctypes_host.py --library libnodeflow.so --graph lenet5.json --nodeflow CLI --work DIR
Runs LeNet-5 on a batch, compares the logits with `nodeflow run`, reads a
weight, trains a few steps with a progress callback that stops it, and checks
the error statuses and messages. Exit status 0 when every check passes.
"""
import argparse
import ctypes as C
import os
import subprocess
import sys

import numpy as np

# nf_status and nf_dtype codes, as a host copies them from docs/c-api.md.
NF_OK, NF_ERR_INVALID_GRAPH, NF_ERR_SHAPE_MISMATCH = 0, 1, 3
NF_ERR_UNSUPPORTED_DTYPE, NF_ERR_IO, NF_ERR_INVALID_ARGUMENT, NF_ERR_BUFFER_TOO_SMALL = 4, 5, 7, 8
NF_FLOAT32, NF_INT64, NF_FLOAT64 = 1, 7, 11
NF_LIST_INPUTS = 0
DTYPE_CODES = {np.dtype(np.float32): NF_FLOAT32, np.dtype(np.int64): NF_INT64,
               np.dtype(np.float64): NF_FLOAT64}
NUMPY_OF = {code: dtype for dtype, code in DTYPE_CODES.items()}

P = C.c_void_p
I64P = C.POINTER(C.c_int64)
PROGRESS = C.CFUNCTYPE(C.c_int32, P, C.c_int64, C.c_int64, C.c_double, C.c_double, C.c_double)
SIGNATURES = {
    "nf_version": [C.POINTER(C.c_uint32), C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)],
    "nf_last_error": [C.POINTER(C.c_int), C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)],
    "nf_graph_load_file": [C.c_char_p, C.POINTER(P)],
    "nf_graph_tensor_count": [P, C.c_int, C.POINTER(C.c_size_t)],
    "nf_graph_tensor_name": [P, C.c_int, C.c_size_t, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)],
    "nf_graph_tensor_info": [P, C.c_char_p, C.POINTER(C.c_int), C.POINTER(C.c_int32), I64P, C.c_size_t],
    "nf_graph_get_initializer": [P, C.c_char_p, P, C.c_size_t, C.POINTER(C.c_size_t)],
    "nf_session_create": [P, C.c_int32, C.POINTER(P)],
    "nf_run_create": [P, C.POINTER(P)],
    "nf_run_set_input_copy": [P, C.c_char_p, C.c_int, C.c_int32, I64P, P, C.c_size_t],
    "nf_run_infer": [P],
    "nf_run_output_info": [P, C.c_char_p, C.POINTER(C.c_int), C.POINTER(C.c_int32), I64P, C.c_size_t,
                           C.POINTER(C.c_size_t)],
    "nf_run_get_output": [P, C.c_char_p, P, C.c_size_t, C.POINTER(C.c_size_t)],
    "nf_trainer_create": [P, C.c_char_p, C.POINTER(P)],
    "nf_trainer_set_data": [P, C.c_int, C.c_int32, I64P, P, C.c_size_t, I64P, C.c_size_t],
    "nf_trainer_train_steps": [P, C.c_int64, PROGRESS, P, C.POINTER(C.c_double), C.POINTER(C.c_double)],
}
RELEASES = ["nf_graph_release", "nf_session_release", "nf_run_release", "nf_trainer_release"]

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("check failed:", what, file=sys.stderr)


def load(path):
    lib = C.CDLL(path)
    for name, args in SIGNATURES.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, C.c_int
    for name in RELEASES:
        getattr(lib, name).argtypes, getattr(lib, name).restype = [P], None
    lib.nf_last_error_message.argtypes, lib.nf_last_error_message.restype = [], C.c_char_p
    return lib


def last_error(lib):
    """The error text as LabVIEW reads it: ask for the length, allocate, copy."""
    length = C.c_size_t()
    assert lib.nf_last_error(None, None, 0, C.byref(length)) == NF_OK
    buffer = C.create_string_buffer(length.value + 1)
    assert lib.nf_last_error(None, buffer, len(buffer), None) == NF_OK
    return buffer.value.decode()


def ok(lib, status, what):
    check(status == NF_OK, f"{what}: status {status}: {last_error(lib)}")


def expect_error(lib, status, expected, text, what):
    message = last_error(lib)
    check(status == expected and text in message,
          f"{what}: expected status {expected} with {text!r}, got {status}: {message!r}")


def dims_of(array):
    return (C.c_int64 * array.ndim)(*array.shape)


def set_input(lib, run, name, array):
    return lib.nf_run_set_input_copy(run, name.encode(), DTYPE_CODES[array.dtype], array.ndim,
                                     dims_of(array), array.ctypes.data, array.nbytes)


def get_output(lib, run, name):
    """Query dtype, shape and size, allocate the array, let the library fill it."""
    dtype, rank, size = C.c_int(), C.c_int32(), C.c_size_t()
    dims = (C.c_int64 * 8)()
    ok(lib, lib.nf_run_output_info(run, name.encode(), C.byref(dtype), C.byref(rank), dims, 8,
                                   C.byref(size)), f"output info {name}")
    out = np.empty(tuple(dims[: rank.value]), dtype=NUMPY_OF[dtype.value])
    check(out.nbytes == size.value, f"{name}: {out.nbytes} bytes, the library says {size.value}")
    ok(lib, lib.nf_run_get_output(run, name.encode(), out.ctypes.data, out.nbytes, None),
       f"get output {name}")
    return out


def batch(n, variant):
    k = np.arange(28 * 28, dtype=np.float64)
    images = np.stack([0.5 + 0.5 * np.sin(0.01 * k * (i + 1 + variant) + i) for i in range(n)])
    return images.astype(np.float32).reshape(n, 1, 28, 28), np.arange(n, dtype=np.int64) % 10


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--library", "--graph", "--nodeflow", "--work"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    lib = load(args.library)

    abi, length = C.c_uint32(), C.c_size_t()
    ok(lib, lib.nf_version(C.byref(abi), None, 0, C.byref(length)), "version")
    check(abi.value >= 1 and length.value > 0, "version numbers")

    graph = P()
    ok(lib, lib.nf_graph_load_file(args.graph.encode(), C.byref(graph)), "load")
    count = C.c_size_t()
    ok(lib, lib.nf_graph_tensor_count(graph, NF_LIST_INPUTS, C.byref(count)), "input count")
    names = []
    for i in range(count.value):
        name = C.create_string_buffer(64)
        ok(lib, lib.nf_graph_tensor_name(graph, NF_LIST_INPUTS, i, name, 64, None), "input name")
        names.append(name.value.decode())
    check(names == ["image", "label"], f"inputs {names}")
    dtype, rank, dims = C.c_int(), C.c_int32(), (C.c_int64 * 4)()
    ok(lib, lib.nf_graph_tensor_info(graph, b"image", C.byref(dtype), C.byref(rank), dims, 4),
       "image info")
    check((dtype.value, list(dims)) == (NF_FLOAT32, [-1, 1, 28, 28]), "image dtype and shape")

    # Inference, compared with the command line's .npy files.
    images, labels = batch(3, 0)
    session, run = P(), P()
    ok(lib, lib.nf_session_create(graph, 1, C.byref(session)), "session")
    ok(lib, lib.nf_run_create(session, C.byref(run)), "run")
    ok(lib, set_input(lib, run, "image", images), "set image")
    ok(lib, set_input(lib, run, "label", labels), "set label")
    ok(lib, lib.nf_run_infer(run), "infer")
    logits, loss = get_output(lib, run, "logits"), get_output(lib, run, "loss")
    np.save(os.path.join(args.work, "image.npy"), images)
    np.save(os.path.join(args.work, "label.npy"), labels)
    out = os.path.join(args.work, "run")
    subprocess.run([args.nodeflow, "run", args.graph, "-i", "image=" + os.path.join(args.work, "image.npy"),
                    "-i", "label=" + os.path.join(args.work, "label.npy"), "-o", out], check=True)
    check(np.array_equal(logits, np.load(os.path.join(out, "logits.npy"))), "logits equal the CLI's")
    check(np.array_equal(loss, np.load(os.path.join(out, "loss.npy"))), "loss equals the CLI's")

    # Errors: a buffer too small, the wrong dtype, an unknown name, a missing file.
    small, size = np.empty(3, dtype=np.float32), C.c_size_t()
    expect_error(lib, lib.nf_run_get_output(run, b"logits", small.ctypes.data, small.nbytes, C.byref(size)),
                 NF_ERR_BUFFER_TOO_SMALL, "needs 120 bytes, the buffer has 12", "small buffer")
    check(size.value == 120, "size of a too-small output")
    ok(lib, set_input(lib, run, "image", images.astype(np.float64)), "set float64 image")
    expect_error(lib, lib.nf_run_infer(run), NF_ERR_UNSUPPORTED_DTYPE, "expected dtype float32", "dtype")
    expect_error(lib, set_input(lib, run, "picture", images), NF_ERR_INVALID_GRAPH,
                 "'picture' is not a graph input", "unknown input")
    missing = P()
    expect_error(lib, lib.nf_graph_load_file(b"/nonexistent/x.json", C.byref(missing)), NF_ERR_IO,
                 "/nonexistent/x.json", "missing file")
    expect_error(lib, lib.nf_run_infer(None), NF_ERR_INVALID_ARGUMENT, "run is NULL", "NULL run")
    check(lib.nf_last_error_message().decode() == "run is NULL", "borrowed error text")

    # Weights as host arrays; training with a callback that stops it.
    weights = np.empty((10, 84), dtype=np.float32)
    ok(lib, lib.nf_graph_get_initializer(graph, b"fc3.W", weights.ctypes.data, weights.nbytes, None),
       "read fc3.W")
    trainer = P()
    config = b'{"optimizer": {"type": "adam", "lr": 0.002}, "batch_size": 4, "log_every": 0}'
    ok(lib, lib.nf_trainer_create(graph, config, C.byref(trainer)), "trainer")
    samples, targets = batch(8, 1)
    ok(lib, lib.nf_trainer_set_data(trainer, NF_FLOAT32, samples.ndim, dims_of(samples), samples.ctypes.data,
                                    samples.nbytes, targets.ctypes.data_as(I64P), targets.size), "data")
    seen = []

    def progress(_user, epoch, step, loss_so_far, accuracy, lr):
        seen.append((epoch, step, loss_so_far, accuracy, lr))
        return 1 if step < 5 else 0

    callback = PROGRESS(progress)
    final_loss = C.c_double()
    ok(lib, lib.nf_trainer_train_steps(trainer, 100, callback, None, C.byref(final_loss), None), "train")
    check([s[1] for s in seen] == [1, 2, 3, 4, 5], f"steps seen {[s[1] for s in seen]}")
    check(seen[-1][0] == 3 and seen[-1][4] == 0.002, f"epoch and lr of the last step {seen[-1]}")
    after = np.empty_like(weights)
    ok(lib, lib.nf_graph_get_initializer(graph, b"fc3.W", after.ctypes.data, after.nbytes, None), "read again")
    check(not np.array_equal(weights, after), "training changed fc3.W")

    lib.nf_trainer_release(trainer)
    lib.nf_run_release(run)
    lib.nf_session_release(session)
    lib.nf_graph_release(graph)
    lib.nf_graph_release(None)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ctypes host: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
