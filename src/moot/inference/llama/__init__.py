"""In-process inference on llama.cpp, the only code that imports llama_cpp: the loaded model
(`model`), JSON grammars (`grammar`), the C-level context (`context`), the decode loop
(`decode`) and the sampler (`sampler`)."""

from moot.inference.llama.grammar import schema_to_gbnf
from moot.inference.llama.model import LlamaCppModel

__all__ = ["LlamaCppModel", "schema_to_gbnf"]
