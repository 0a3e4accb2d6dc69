"""English sentences of the poem demo's side-by-side view (``gradekit demo --assignment decoder_lm --submission``)."""

MESSAGES = {
    "demo.poems.sampled": "One poem per first character, sampled the same way (temperature 0.8, top-k 20, top-p 0.9, "
    "the same seed, with the KV cache):",
    "demo.poems.first_loss": "The first step's loss: yours {yours}, the reference {reference} (an untrained model "
    "starts near ln V = {ln_v}).",
}
