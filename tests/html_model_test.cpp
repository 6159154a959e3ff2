// The HTML report of runs on a model (traces/html_model.hpp, traces/report_assessment.hpp):
// the facts at the top, the verdict, the summary table where a configuration that does not
// fit is marked and never bold, and memory charts of static memory plus activations against
// the GPU's capacity.
#include "traces/html_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/html_checks.hpp"
#include "traces/html_memory.hpp"
#include "traces/html_report.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr std::int64_t kMiB = 1ll << 20;

// An assessment of `run` with `static_mib` of static memory on every device (a quarter each
// of weights, gradients, optimizer state and buffers) and the activations the engine measured.
ReportAssessment assessment_of(const SimRun& run, std::int64_t static_mib, double tokens_per_s) {
  ReportAssessment a;
  a.model = "gpt-test";
  a.hardware = "gpu-1g";
  a.nodes = 1;
  a.gpus_per_node = 4;
  a.tp = 1;
  a.pp = run.schedule.num_devices;
  a.dp = 1;
  a.global_batch = run.schedule.microbatches;
  a.tokens_per_iteration = a.global_batch * 2048;
  a.tokens_per_s = tokens_per_s;
  a.mfu = tokens_per_s / 1000;
  a.price_per_hour = 2.0;
  a.price_source = "a test price";
  a.cost_per_million_tokens = 2.0 * 4 / 3600 / tokens_per_s * 1e6;
  a.capacity = 1024 * kMiB;
  for (const DeviceMetrics& d : run.metrics.per_device) {
    const std::int64_t q = static_mib * kMiB / 4;
    a.memory.push_back({q, q, q, q, d.peak_activation_bytes, 1});
  }
  return a;
}

UniformCostConfig sized() {
  UniformCostConfig costs;
  costs.activation_bytes = 64 * kMiB;
  return costs;
}

// gpipe and 1f1b fit in 1 GiB (8 and 4 x 64 MiB of activations over 100 MiB); zb-h1 is the
// fastest (27 ms against 33 ms) but holds 850 MiB of static memory and, with its 256, 224,
// 192 and 160 MiB of activations, does not fit on devices 0 to 2.
struct ThreeRuns {
  SimRun gpipe = simulate_run("gpipe", {.p = 4, .m = 8}, sized());
  SimRun f1b = simulate_run("1f1b", {.p = 4, .m = 8}, sized());
  SimRun zb = simulate_run("zb-h1", {.p = 4, .m = 8}, sized());
  ReportAssessment a_gpipe = assessment_of(gpipe, 100, 90);
  ReportAssessment a_1f1b = assessment_of(f1b, 100, 100);
  ReportAssessment a_zb = assessment_of(zb, 850, 120);

  std::string page() const {
    const std::vector<ReportRun> runs = {{gpipe.schedule, gpipe.timeline, gpipe.metrics, &a_gpipe},
                                         {f1b.schedule, f1b.timeline, f1b.metrics, &a_1f1b},
                                         {zb.schedule, zb.timeline, zb.metrics, &a_zb}};
    ReportOptions options;
    options.title = "pipesim report: compare, gpt-test on 4 x gpu-1g";
    options.settings = {{"m", "8"}, {"iterations", "1"}};
    std::ostringstream out;
    write_html_report(out, runs, options);
    return out.str();
  }
};

// The markup of the summary table's row that starts with `start`, up to its </tr>.
std::string row_of(const std::string& html, const std::string& start) {
  const std::size_t at = html.find(start);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</tr>", at) - at);
}

TEST(ReportAssessment, PeakAndFitComeFromTheDevices) {
  const SimRun zb = simulate_run("zb-h1", {.p = 4, .m = 8}, sized());
  const ReportAssessment a = assessment_of(zb, 850, 1);
  EXPECT_EQ(a.peak_memory(), (850 + 4 * 64) * kMiB);  // device 0 holds 4 activations
  EXPECT_EQ(a.peak_device(), 0);
  EXPECT_FALSE(a.fits());
  EXPECT_EQ(fit_text(a), "over by 82.0 MiB");
  EXPECT_EQ(fit_text(assessment_of(zb, 100, 1)), "fits (668.0 MiB free)");
  EXPECT_EQ(grouped_number(65536), "65,536");
  EXPECT_EQ(grouped_number(999), "999");
  EXPECT_EQ(grouped_number(1234567.4), "1,234,567");
}

TEST(HtmlModel, TheTopNamesModelGpuClusterParallelismAndGlobalBatch) {
  const std::string html = ThreeRuns().page();
  EXPECT_THAT(html, HasSubstr("<tr><td>model</td><td>gpt-test</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>GPU</td><td>gpu-1g: 1.0 GiB, $2.00 per GPU-hour (a test price)</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>cluster</td><td>1 node x 4 GPUs = 4 GPUs</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>parallelism</td><td>tp=1 pp=4 dp=1</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<td>batch per iteration</td><td>8 sequences x 2,048 tokens = 16,384 tokens per "
                              "iteration</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<td>optimizer steps</td>")));  // every run steps once an iteration
  EXPECT_THAT(html, HasSubstr("m=8 &middot; iterations=1"));
  EXPECT_EQ(markup_error(html), "");
  expect_self_contained(html);
}

TEST(HtmlModel, ARunThatDoesNotFitIsMarkedAndNeverBest) {
  const std::string html = ThreeRuns().page();
  // zb-h1 has the lowest time, the most tokens/s and the least bubble, but does not fit.
  const std::string zb = row_of(html, "<tr class=\"nofit\"><td><a href=\"#run-2\">zb-h1</a></td>");
  ASSERT_FALSE(zb.empty()) << html;
  EXPECT_THAT(zb, Not(HasSubstr("best")));
  EXPECT_THAT(zb, HasSubstr("<td class=\"fit\">over by 82.0 MiB</td>"));
  EXPECT_THAT(zb, HasSubstr("<td>120</td>"));  // its tokens/s, not bold
  // The best of the rows that fit is bold instead: 1f1b's tokens/s. Their times are equal
  // (33 ms), so none is bold, though zb-h1's 27 ms is lower.
  const std::string f1b = row_of(html, "<tr><td><a href=\"#run-1\">1f1b</a></td>");
  EXPECT_THAT(f1b, HasSubstr("<td class=\"best\">100</td>"));
  EXPECT_THAT(f1b, HasSubstr("<td>33.000 ms</td>"));
  EXPECT_THAT(row_of(html, "<tr><td><a href=\"#run-0\">gpipe</a></td>"), HasSubstr("<td>33.000 ms</td>"));
  EXPECT_EQ(count(html, "<tr class=\"nofit\">"), 1u + 3u);  // the summary row, and 3 of zb-h1's 4 devices
  // The verdict picks the fastest that fits and names the faster one that does not.
  EXPECT_THAT(html, HasSubstr("<p class=\"verdict\">Fastest that fits: <b><a href=\"#run-1\">1f1b</a></b>, 100 tokens/s"));
  EXPECT_THAT(html, HasSubstr("Faster, but does not fit: <a href=\"#run-2\">zb-h1</a> (120 tokens/s) is over by "
                              "82.0 MiB on device 0."));
  // Its section says so at the top.
  EXPECT_THAT(html, HasSubstr("<section id=\"run-2\" class=\"nofit\">\n<h2>zb-h1<span class=\"badge\">does not fit: "
                              "over by 82.0 MiB</span></h2>"));
  EXPECT_THAT(html, HasSubstr("<td>fits?</td><td>no, over by 82.0 MiB</td>"));
  EXPECT_THAT(html, HasSubstr("Bold: best in its column among the configurations that fit."));
  EXPECT_EQ(markup_error(html), "");
}

TEST(HtmlModel, TheMemoryChartIsStaticPlusActivationsAgainstTheGpu) {
  const std::string html = ThreeRuns().page();
  EXPECT_EQ(count(html, ">memory per GPU: static + activations (GiB)</text>"), 3u);
  EXPECT_EQ(count(html, ">capacity 1.0 GiB</text>"), 6u);  // the memory chart and the bars of each run
  // zb-h1's device 0: 850 MiB static + 4 x 64 MiB of activations.
  EXPECT_THAT(html, HasSubstr("<title>device 0: peak 1.1 GiB = 850.0 MiB static + 256.0 MiB activations</title>"));
  EXPECT_THAT(html, HasSubstr("Peak memory exceeds the capacity on devices 0, 1, 2: the configuration does not fit"));
  EXPECT_EQ(count(html, "<h3>Memory at the peak, per device</h3>"), 3u);
  EXPECT_EQ(count(html, "<summary>Activation memory alone</summary>"), 3u);
  EXPECT_THAT(html, Not(HasSubstr("<h3>Activation memory</h3>")));
}

TEST(MemoryChart, StaticMemoryLiftsEachDevicesLine) {
  const SimRun zb = simulate_run("zb-h1", {.p = 4, .m = 8}, sized());
  MemoryChartOptions options;
  options.capacity_bytes = 1024 * kMiB;
  options.static_bytes = {850 * kMiB, 850 * kMiB, 850 * kMiB, 850 * kMiB};
  const MemoryChart m = render_memory_chart(zb.schedule, zb.timeline, options);
  EXPECT_EQ(m.peak, (850 + 256) * kMiB);
  EXPECT_THAT(m.over_capacity, testing::ElementsAre(0, 1, 2));  // 1106, 1074, 1042 MiB; device 3 holds 1010
  EXPECT_THAT(m.legend, HasSubstr("dev 3 (peak 1010.0 MiB)"));
  options.static_bytes.clear();  // activations alone: all under the capacity
  EXPECT_TRUE(render_memory_chart(zb.schedule, zb.timeline, options).over_capacity.empty());
}

TEST(MemoryBreakdown, OneBarPerDeviceInFiveParts) {
  const SimRun zb = simulate_run("zb-h1", {.p = 4, .m = 8}, sized());
  ReportAssessment a = assessment_of(zb, 850, 1);
  a.memory[1].weight_copies = 2;
  const MemoryBreakdownChart c = render_memory_breakdown(a.memory, a.capacity);
  for (const char* part : {"mw", "mg", "mo", "mb", "ma"})
    EXPECT_EQ(count(c.svg, std::string("class=\"") + part + "\""), 4u) << part;
  EXPECT_THAT(c.svg, HasSubstr("<title>device 0 activations (peak): 256.0 MiB</title>"));
  EXPECT_THAT(c.svg, HasSubstr("<title>device 1 weights: 212.5 MiB (2 copies)</title>"));
  EXPECT_THAT(c.svg, HasSubstr(">1.1 GiB (over by 82.0 MiB)</text>"));
  EXPECT_THAT(c.svg, HasSubstr(">1010.0 MiB</text>"));  // device 3 fits
  EXPECT_THAT(c.svg, HasSubstr("class=\"cap\""));
  EXPECT_THAT(c.legend, HasSubstr("optimizer state"));
  EXPECT_EQ(markup_error(c.svg), "");
}

TEST(HtmlModel, VerdictWhenNothingFitsOrOneRun) {
  ThreeRuns r;
  for (ReportAssessment* a : {&r.a_gpipe, &r.a_1f1b}) a->capacity = 256 * kMiB;
  r.a_zb.capacity = 256 * kMiB;
  const std::string html = r.page();
  EXPECT_THAT(html, HasSubstr("<p class=\"verdict none\">Nothing fits in the GPU's memory. Closest: "
                              "<a href=\"#run-1\">1f1b</a>, 356.0 MiB on device 0, over 256.0 MiB by 100.0 MiB.</p>"));
  EXPECT_THAT(html, Not(HasSubstr("class=\"best\"")));  // nothing fits, so nothing is best
  const std::string one =
      verdict_html({{&r.f1b.metrics, &r.a_1f1b, ""}});
  EXPECT_EQ(one, "<p class=\"verdict none\">1f1b does not fit: 356.0 MiB on device 0 of the gpu-1g's 256.0 MiB (over "
                 "by 100.0 MiB); 100 tokens/s, $22.222 per million tokens.</p>\n");
}

TEST(HtmlModel, AssumedPricesAndRunsWithoutAPriceSaySo) {
  ThreeRuns r;
  r.a_1f1b.price_assumed = true;
  r.a_1f1b.price_source = "a guess";
  EXPECT_THAT(model_summary_html(r.a_1f1b), HasSubstr("(assumed price) per million tokens"));
  r.a_gpipe.price_per_hour.reset();
  r.a_gpipe.cost_per_million_tokens.reset();
  EXPECT_THAT(model_summary_html(r.a_gpipe), HasSubstr("<td>cost</td><td>- (no price per GPU-hour)</td>"));
  EXPECT_THAT(experiment_facts_html({{&r.gpipe.metrics, &r.a_gpipe, ""}, {&r.f1b.metrics, &r.a_1f1b, ""}}),
              HasSubstr("gpu-1g: 1.0 GiB, no price (give one with --price-per-hour) / gpu-1g: 1.0 GiB, $2.00 per "
                        "GPU-hour (assumed: a guess)"));
}

TEST(HtmlModel, SeveralGpusGetAColumnAndSectionNames) {
  ThreeRuns r;
  r.a_zb.hardware = "gpu-2g";
  r.a_zb.capacity = 2048 * kMiB;  // now it fits, and is the best
  const std::string html = r.page();
  EXPECT_THAT(html, HasSubstr("<th>GPU</th>"));
  EXPECT_THAT(html, HasSubstr("<h2>zb-h1 on gpu-2g</h2>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>GPUs</td>"));
  EXPECT_THAT(row_of(html, "<tr><td><a href=\"#run-2\">zb-h1</a></td>"), HasSubstr("<td class=\"best\">120</td>"));
  EXPECT_THAT(html, HasSubstr("Fastest that fits: <b><a href=\"#run-2\">zb-h1 on gpu-2g</a></b>"));
  EXPECT_THAT(html, Not(HasSubstr("class=\"nofit\"")));
}

TEST(HtmlModel, IsByteIdenticalForIdenticalInput) { EXPECT_EQ(ThreeRuns().page(), ThreeRuns().page()); }

TEST(HtmlModel, UniformRunsKeepTheirPage) {
  const SimRun a = simulate_run("gpipe", {.p = 4, .m = 8}, sized());
  const SimRun b = simulate_run("1f1b", {.p = 4, .m = 8}, sized());
  const std::string html = report_of({&a, &b});
  for (const char* model_only :
       {"class=\"kv facts\"", "class=\"verdict", "class=\"nofit\"", "tokens/s", "Memory at the peak"})
    EXPECT_THAT(html, Not(HasSubstr(model_only))) << model_only;
  EXPECT_THAT(html, HasSubstr("<h3>Activation memory</h3>"));
  EXPECT_THAT(html, HasSubstr("throughput (micro-batches/s)"));
}

}  // namespace
}  // namespace pipesim
