"""``analyze``: exact properties of the construction, trained-network measurements, loading and clear errors."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from margintheory.core import theory
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.errors import InputError
from margintheory.training.analysis import analyze_network

EXE = shutil.which("margintheory")


@pytest.mark.parametrize("p,k", [(5, 2), (7, 2), (5, 3)])
def test_construction_reports_its_known_properties(p, k):
    net = build_construction(p, k)
    res = analyze_network(net, p, k)
    f = res.fields
    assert res.verdict == "verified"
    assert all(c.passed for c in res.checks)
    gamma = theory.gamma_star(p, k)
    assert abs(f["normalized_margin"] - gamma) <= f["margin_tolerance"] + 1e-15
    assert f["ratio_to_gamma_star"] == pytest.approx(1.0, abs=1e-12)
    assert f["fraction_optimal"] == 1.0 and f["weighted_fraction_optimal"] == pytest.approx(1.0, abs=1e-12)
    assert f["fraction_sparse"] == 1.0 and f["neuron_max_power_min"] == pytest.approx(1.0, abs=1e-12)
    assert f["phase_residual_max"] <= 1e-12
    # Lemma C.18: 2^(2k-1) neurons on each frequency 1..(p-1)/2, none on 0
    hist = np.asarray(f["frequency_histogram"])
    assert hist[0] == 0 and list(hist[1:]) == [2 ** (2 * k - 1)] * ((p - 1) // 2)
    assert f["frequency_tv_to_construction"] <= 1e-12
    assert f["frequencies_covered"] == theory.frequencies(p) == f["frequencies_covered_at_tolerance"]
    assert f["width"] == theory.construction_width(p, k) == f["construction_width"]
    assert f["ratio_to_construction"] == pytest.approx(1.0, abs=1e-12)
    assert f["multidim_dft_min_real"] > 0


def test_a_perturbed_construction_is_measured_not_verified():
    net = build_construction(7, 2)
    rng = np.random.default_rng(0)
    noisy = PolyNetwork(net.U + 1e-3 * rng.normal(size=net.U.shape), net.W + 1e-3 * rng.normal(size=net.W.shape))
    res = analyze_network(noisy, 7, 2, tolerance=1e-2)
    assert res.verdict == "refuted"  # strict float tolerance: not exactly max-margin
    assert 0.9 < res.fields["ratio_to_gamma_star"] < 1.0
    assert res.fields["fraction_sparse"] == 1.0  # within the stated 1e-2 tolerance
    relaxed = analyze_network(noisy, 7, 2, rtol=0.2, tolerance=1e-2)
    names = {c.name: c.passed for c in relaxed.checks}
    assert names["margin = gamma* (C.22)"]


def test_shape_mismatch_is_a_clear_input_error():
    net = build_construction(5, 2)
    with pytest.raises(InputError, match="k=2 inputs and p=5"):
        analyze_network(net, 7, 2)
    with pytest.raises(InputError, match="k=2"):
        analyze_network(net, 5, 3)


def _run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(EXE is None, reason="console script not installed")
def test_analyze_cli_json_plots_and_errors(tmp_path):
    net = build_construction(5, 2)
    path = tmp_path / "c.npz"
    net.save(path)
    proc = _run("analyze", str(path), "--p", "5", "--k", "2", "--json", "--plots", str(tmp_path / "plots"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "verified" and {"checks", "notes", "ratio_to_gamma_star"} <= set(doc)
    assert all(set(c) >= {"name", "expected", "measured", "tolerance", "passed"} for c in doc["checks"])
    for name in ("summary.png", "summary.pdf", "embeddings.png", "embeddings.pdf", "frequencies.png",
                 "frequencies.pdf"):
        assert (tmp_path / "plots" / name).stat().st_size > 0
    wrote = {line.removeprefix("wrote ") for line in proc.stderr.splitlines() if line.startswith("wrote ")}
    assert wrote == {str(p) for p in (tmp_path / "plots").iterdir()} == set(doc["details"]["figures"])


@pytest.mark.parametrize("case", ["mismatch", "garbage", "missing", "wrong-shapes"])
def test_analyze_cli_errors_are_one_line_exit_2(tmp_path, capsys, case):
    from margintheory.cli import main

    path = tmp_path / "c.npz"
    build_construction(5, 2).save(path)
    (tmp_path / "bad.npz").write_bytes(b"garbage")
    np.savez(tmp_path / "w.npz", U=np.zeros((2, 2, 5)), W=np.zeros((2, 4)))
    file, p = {"mismatch": (path, "7"), "garbage": (tmp_path / "bad.npz", "5"),
               "missing": (tmp_path / "none.npz", "5"), "wrong-shapes": (tmp_path / "w.npz", "5")}[case]
    assert main(["analyze", str(file), "--p", p, "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "error" in err


@pytest.mark.parametrize("p,k,m", [(5, 2, 16), (6, 2, 3), (3, 1, 1)])
def test_summary_figure_for_odd_even_and_single_neuron_networks(tmp_path, p, k, m):
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.training.figures import plot_summary

    rng = np.random.default_rng(p)
    net = build_construction(p, k) if p == 5 else PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))
    written = plot_summary(net, exhaustive_margin(net), tmp_path / "summary")
    assert [w.name for w in written] == ["summary.png", "summary.pdf"]
    assert all(w.stat().st_size > 10_000 for w in written)
    box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", written[1].read_bytes())
    assert box and float(box.group(1)) <= 3.7 * 72  # one column (3.5 in + the tight bounding box), in points


@pytest.mark.parametrize("p,k", [(17, 2), (7, 3)])
def test_summary_figure_is_legible_at_one_column_width(p, k):
    """Text of at least 5.5 pt on a 3.5 in wide figure, and no two pieces of text (titles, labels, ticks,
    legends, the colour bar) overlap: the first version of this figure was 11 in wide and its labels collided
    once shrunk to a column."""
    from itertools import combinations

    from matplotlib.text import Text

    from margintheory.engines.margins import exhaustive_margin
    from margintheory.training.figures import summary_figure

    rng = np.random.default_rng(p)
    base = build_construction(p, k)
    net = PolyNetwork(base.U + 1e-3 * rng.normal(size=base.U.shape), base.W)  # a spread of margins, phases off 0
    fig = summary_figure(net, exhaustive_margin(net))
    assert tuple(fig.get_size_inches()) == (3.5, 3.9)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    hidden = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for tick in axis.get_major_ticks()
              for label in (tick.label1, tick.label2)  # ticks outside the view limits are not drawn
              if not min(axis.get_view_interval()) - 1e-9 <= tick.get_loc() <= max(axis.get_view_interval()) + 1e-9}
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    assert len(texts) > 40 and min(t.get_fontsize() for t in texts) >= 5.5
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    clashes = [(a, b) for (a, ba), (b, bb) in combinations(boxes, 2) if ba.overlaps(bb)]
    assert not clashes, clashes[:5]
    outside = [a for a, box in boxes if box.x0 < -1 or box.x1 > fig.bbox.width + 1]
    assert not outside, outside


def test_the_margin_figure_is_drawn_from_this_networks_history_only(tmp_path, capsys, monkeypatch):
    """analyze --plots draws a margin curve only from the history of the run that ended in the network: a
    checkpoint's own history, or history.json when its last row's margin is the network's.  A history of another
    session, of another network, or a damaged one is not drawn (one line on stderr says why)."""
    from margintheory.cli import main
    from margintheory.training import figures
    from margintheory.training.trainer import TrainConfig, train

    drawn: list[list[dict]] = []
    original = figures.plot_margin_history
    monkeypatch.setattr(figures, "plot_margin_history", lambda h, *a, **kw: drawn.append(h) or original(h, *a, **kw))
    run = tmp_path / "run"
    assert main(["train", "--p", "5", "--k", "2", "--width", "8", "--steps", "30", "--out", str(run), "--no-figures",
                 "--no-progress"]) == 0

    def analyze(name: str) -> str:
        capsys.readouterr()
        assert main(["analyze", str(run / name), "--p", "5", "--k", "2", "--plots", str(tmp_path / name)]) in (0, 1)
        return capsys.readouterr().err

    assert "not drawn" not in analyze("network.npz") and drawn[-1][-1]["step"] == 30
    # a later session stopped at step 45: the checkpoint carries its history, history.json is still the first's
    train(TrainConfig(p=5, k=2, width=8, steps=60), checkpoint=run / "checkpoint.npz", resume=True, stop_after=15)
    assert "not drawn" not in analyze("checkpoint.npz") and drawn[-1][-1]["step"] == 45
    shutil.copy(run / "initial.npz", run / "other.npz")  # same shape, another network
    err = analyze("other.npz")
    assert len(drawn) == 2 and "margin figure not drawn" in err and "ends at step 30" in err
    assert not (tmp_path / "other.npz" / "margin.png").exists()
    (run / "history.json").write_text('{"config": {"width": 8}, "history": [')
    err = analyze("network.npz")
    assert len(drawn) == 2 and "not a readable history (JSONDecodeError" in err and "Traceback" not in err


def test_the_lemma_c20_rows_show_the_number_that_decides_them():
    """A network near the construction (1e-3 noise), as a trained one is: ``f^(j..,-j) > 0`` failed on an imaginary
    part the table did not show, and "all frequencies (C.20)" read [] while training and its figure counted every
    frequency covered.  Now the imaginary part is its own row, and coverage is counted as train counts it (the
    dominant frequency of neurons whose vectors all have max normalized power >= 0.9); the strict count (neurons
    single-frequency at the Fourier tolerance) is in the row's detail and its own field."""
    from margintheory.tasks.modular_addition.checks import COVERAGE_POWER
    from margintheory.training.metrics import SPARSE_THRESHOLD, fourier_summary

    base = build_construction(11, 2)
    rng = np.random.default_rng(3)
    net = PolyNetwork(base.U * (1 + 1e-3 * rng.standard_normal(base.U.shape)),
                      base.W * (1 + 1e-3 * rng.standard_normal(base.W.shape)))
    res = analyze_network(net, 11, 2, compare_construction=False)
    rows = {c.name: c for c in res.checks}
    assert COVERAGE_POWER == SPARSE_THRESHOLD
    assert rows["all frequencies (C.20)"].measured == theory.frequencies(11) and rows["all frequencies (C.20)"].passed
    assert fourier_summary(net.U, net.W).frequencies_covered == 5
    assert res.fields["frequencies_covered_single_frequency"] == [] and not rows["single frequency"].passed
    imag = max(abs(complex(z).imag) for z in res.fields["multidim_dft"])
    real = rows["f^(j..,-j) real (C.20)"]
    assert real.measured == imag > real.tolerance and not real.passed
    assert rows["f^(j..,-j) > 0 (C.20)"].passed and rows["f^(j..,-j) > 0 (C.20)"].measured > 0
    assert "Re f^(j..,-j) > 0 (C.20)" not in rows  # the sign-only row duplicated the positive-part row
