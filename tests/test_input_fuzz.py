"""A short fixed-seed round of validation/fuzz_inputs.py: damaged fio results and logs, traces,
scenarios and device profiles each end in one InputError, never another exception."""

import pytest

from validation.fuzz_inputs import fuzz


@pytest.mark.slow          # about 35 device fits among the 400 inputs: 1.5-2 minutes
def test_damaged_inputs_give_input_errors_only():
    failures = fuzz(seed=7, iterations=400)
    assert not failures, "\n".join(f"{f.kind}: {f.error} at {f.where} ({f.sample})" for f in failures)
