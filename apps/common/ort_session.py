"""An ONNX Runtime session for a one-graph model, as the benchmarks run
their ORT baselines: checked model, CPU provider, ``threads`` intra-op
threads and one inter-op thread."""
from __future__ import annotations


def ort_session(graph, threads):
    """(session, onnxruntime version) for ``graph`` (opset 13)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), so,
                                   providers=["CPUExecutionProvider"])
    return session, ort.__version__
