"""en sentences of the decoder-only LM (sampling, the optimiser, training)."""

MESSAGES = {
    "fail.lm_top_k_kept": "top_k_filter(k={k}) keeps {got} entries of row {row}, expected {expected} (the first wrong "
    "position is {index}): a logit survives iff it is >= the k-th largest of its row, so ties "
    "at the boundary all survive, and k >= V keeps everything.",
    "fail.lm_top_p_kept": "top_p_filter(p={p}) keeps {got} tokens of row {row}, expected {expected} (the first wrong "
    "token is {index}): token j survives iff the total probability of the tokens strictly more "
    "probable than j is < p. The token that crosses p is kept (cutting where the running sum "
    "first exceeds p drops it one token too early), tied tokens share one fate, the most "
    "probable always survives and p >= 1 keeps everything.",
    "fail.lm_sample_range": "sample_next returned {count} token ids outside 0 … {V} - 1.",
    "fail.lm_sample_outside": "sample_next(temperature={temperature}, top_k={top_k}, top_p={top_p}) drew token "
    "{token} of row {row} {count} times in {n} draws, although the filters remove it: it "
    "must never be drawn. Filter the logits (temperature, then top-k, then top-p) before "
    "the softmax, and draw from those probabilities.",
    "fail.lm_sample_distribution": "the frequencies of {n} draws from sample_next(temperature={temperature}, "
    "top_k={top_k}, top_p={top_p}) do not follow softmax(top_p(top_k(logits / "
    "temperature))) in row {row}: chi-square {stat} with {df} degrees of freedom, "
    "p-value {pvalue}. Token {token} came {observed} times, about {expected} "
    "expected. (A chi-square test with a fixed seed: a correct sampler fails this "
    "check with probability below {alpha}.) Usual causes: the temperature applied "
    "after the softmax or not at all, top-p applied before top-k or to the "
    "untempered logits.",
    "fail.lm_multinomial": "sample_next made {calls} torch.multinomial call(s) ({shapes}). The contract asks for "
    "exactly one call, torch.multinomial(probs, num_samples=1, generator=generator), on the "
    "probabilities of all rows at once, shape {expected}: that is what makes the same "
    "generator seed give the reference's tokens. Drawing another way (a call per row, Gumbel "
    "noise, torch.distributions) breaks this rule of the contract and costs this check's "
    "points; whether your draws follow the right distribution is graded separately, by the "
    "distribution check.",
    "fail.lm_global_generator": "{what} called without a generator does not draw from torch's global random "
    "generator, as the contract's generator=None does (torch.multinomial(..., "
    "generator=None)): with the same global seed, the reference's tokens differ at "
    "{index}.",
    "fail.lm_no_generator": "sample_next did not draw with the generator it was given (its state did not change): "
    "pass generator=generator to torch.multinomial.",
    "fail.lm_same_seed": "with the same generator seed, sample_next drew a different token in {count} of {total} "
    "rows (the first is row {row}). The probabilities you gave torch.multinomial differ from "
    "the expected ones by up to {max_abs} (your dtype {dtype}, expected {expected_dtype}): "
    "divide by the temperature, then top_k_filter, then top_p_filter, then softmax.",
    "fail.lm_greedy": "sample_next with temperature=0 chose token {got} in row {row}; expected the argmax of that "
    "row's logits (the lowest index among equal maxima, as torch.argmax gives).",
    "fail.lm_greedy_rng": "sample_next with temperature=0 drew random numbers ({which} advanced); greedy choice "
    "uses no randomness: return the argmax before any filter or draw.",
    "fail.lm_gen_forwards": "generate(max_new_tokens={n}) called the model {got} times; expected exactly {n}: one "
    "forward on the whole prompt, then one per new token on that token alone. The last "
    "sampled token is not fed back, and max_new_tokens=0 makes no call.",
    "fail.lm_gen_forward_shape": "generate's forward number {call} got tokens of shape {got}, expected {expected}: "
    "the first forward takes the whole prompt [B, L0], each later one only the newest "
    "token [B, 1] (the cache holds the rest).",
    "fail.lm_gen_no_cache": "generate called forward number {call} without caches: create them once with "
    "model.new_cache() and pass them to every forward.",
    "fail.lm_gen_cache_length": "at generate's forward number {call} the caches held {got} positions, expected "
    "{expected}: create the caches once, before the loop, and pass the same ones at "
    "every step.",
    "fail.lm_gen_grad": "generate ran forward number {call} with gradients being recorded: wrap it in "
    "torch.no_grad() (the @torch.no_grad() decorator does it).",
    "fail.lm_gen_output_grad": "generate returned a tensor that requires grad: generate under torch.no_grad().",
    "fail.lm_gen_training": "generate changed model.training from {before} to {after}: leave the model's mode as it "
    "was (the model has no dropout, so eval() is not needed).",
    "fail.lm_gen_prompt": "generate's output does not start with the prompt (first difference at {index}): return "
    "the prompt followed by the new tokens.",
    "fail.lm_groups_count": "param_groups returned {got} groups; expected 2: the parameters that decay, then those "
    "that do not.",
    "fail.lm_groups_decay": "group {group} of param_groups has weight_decay {got}, expected {expected} (the first "
    "group the weight_decay given, the second 0.0).",
    "fail.lm_groups_params": "group {group} of param_groups holds {got}, expected {expected}: the first group has "
    "every parameter of 2 or more dimensions, the second every other, each in "
    "named_parameters() order; a tied tensor appears once, parameters with "
    "requires_grad=False are left out.",
    "fail.lm_not_optimizer": "AdamW(...) is not a torch.optim.Optimizer: subclass torch.optim.Optimizer.",
    "fail.lm_adamw_closure": "AdamW.step(closure) returned {got}, not what the closure returned.",
    "fail.lm_adamw_none": "AdamW.step() without a closure returned {got}, expected None.",
    "fail.lm_cosine": "cosine_lr(step={step}, max_lr={max_lr}, min_lr={min_lr}, warmup_steps={warmup}, "
    "total_steps={total}) = {got}, which does not match the formula.",
    "fail.lm_cosine_type": "cosine_lr returned {got}; expected a Python float.",
    "fail.lm_clip_created": "clip_grad_norm_ gave parameter {param} a gradient although it had none: skip "
    "parameters whose grad is None.",
    "fail.lm_clip_inplace": "clip_grad_norm_ replaced the gradients of parameter(s) {params} with new tensors: "
    "scale them in place (grad.mul_(...)).",
    "fail.lm_train_loss": "train_step returned {got} at step {step}, which is not the loss for the same weights "
    "and batch before the update.",
    "fail.lm_train_lr": "after train_step(lr={lr}) at step {step} the optimizer's groups have learning rates "
    "{got}, not {expected}: set every group's lr when lr is given, and leave them alone when it "
    "is None.",
    "fail.lm_overfit_loss": "after {steps} training steps on 10 poems the loss is {last}, not below {target}: the "
    "whole model, optimiser, schedule and train_step together do not learn what a correct "
    "one learns. If a task beneath fails, fix that first; else look at what connects them "
    "(the lr reaching the groups, the gradients zeroed, the loss's shifted targets).",
    "fail.lm_overfit_nonfinite": "the loss became {value} at step {step} of {steps} on 10 poems, and training "
    "stopped there: look for a division by zero or a log of zero (an RMSNorm without "
    "eps, a softmax over a row of -inf) or a learning rate far too large.",
    "fail.lm_overfit_recite": "the loss fell, but greedy generate gets {wrong} of the {total} poems wrong "
    "(from their first character: {examples}): the model learnt them, so look at "
    "generate with temperature 0 and the cache (positions continuing from its length).",
    # -- words inside a failure's example (what a call was given), said in the reader's language --------------
    "lm.example.a_list": "a list",
    "lm.example.a_generator": "a generator",
    "lm.example.tensor_list": "a list of tensors",
    "lm.example.the_defaults": "(all defaults)",
    "lm.example.default": "{value} (the default)",
}
