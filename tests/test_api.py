"""The public API of docs/models.md §1 is importable from the top level of ctx_reference."""
import ctx_reference

API_NAMES = (
    "estimate_tokens", "Tokenizer", "FakeTokenizer", "Outcome", "Window", "remaining", "RecallModel",
    "Item", "assemble", "Assembly", "BudgetError", "trim_lines", "SimParams", "simulate", "SimResult",
    "STRATEGIES", "PromptSpec", "render", "Case", "Result", "diff", "Zone", "zone", "WindowLedger",
    "ContextOverflowError",
)


def test_every_spec_name_is_exported():
    """Each name of the API table of docs/models.md §1 is in ctx_reference.__all__ and importable from the package."""
    missing = [name for name in API_NAMES if name not in ctx_reference.__all__ or not hasattr(ctx_reference, name)]
    assert missing == []


def test_all_lists_only_real_names_once():
    """__all__ names only attributes that exist, each once."""
    assert len(set(ctx_reference.__all__)) == len(ctx_reference.__all__)
    assert [n for n in ctx_reference.__all__ if not hasattr(ctx_reference, n)] == []


def test_strategies_are_the_four_of_the_lesson():
    """STRATEGIES names the four strategies in the lesson's order."""
    assert ctx_reference.STRATEGIES == ("none", "clear", "clear_notes", "compact")
