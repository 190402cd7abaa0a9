// The order in which the calls of consecutive iterations run, with staleness as an edge: iteration i's
// generation reads the actor's weights after update i-1-N (N = DataflowGraph::staleness). The simulator
// unrolls these steps to price the steady state and the runtime executes them, so both follow one order.
//
// A call "runs ahead" when it can run as soon as its iteration's generation is done: a generation call, or a
// call of a model that is never trained whose inputs all come from calls that run ahead (the reference's and
// the reward model's inference). The other calls read a trained model's weights or its outputs and run in
// their own iteration's step. Step s (1-based) runs, each group in graph order: in step 1 the calls that run
// ahead of iteration 1; the generations of the iterations that start (s+N; in step 1, 2..N+1); the other
// calls of iteration s; the later iterations' other calls that run ahead (the reference's inference of
// iteration s+N comes after iteration s's training, which it does not feed). With N = 0 a step is exactly one
// iteration in graph order. The calls that run ahead of iteration s+N read the weights the step starts with,
// version s-1 = (s+N)-1-N, as the edge says.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/dataflow_graph.h"

namespace realign {

bool runs_ahead(const DataflowGraph& graph, int call);

// The staleness the schedule and its weight edges follow: the graph's, or one less where only a share of
// each batch may run that far ahead (DataflowGraph::staleness_share < 1): the generation is then placed
// against the newer weights, and the simulator lets its share start earlier, with the older ones.
int64_t scheduled_staleness(const DataflowGraph& graph);

// One call of one iteration (1-based).
struct CallInstance {
  int call = 0;
  int64_t iteration = 0;
  bool operator==(const CallInstance& o) const { return call == o.call && iteration == o.iteration; }
};

// The calls step `step` of `iterations` runs, in order (calls that run ahead of iterations past the last are
// left out).
std::vector<CallInstance> step_calls(const DataflowGraph& graph, int64_t step, int64_t iterations);

// A dependency across iterations: call `to` of iteration i needs call `from` of iteration i - lag, because it
// reads the weights `from` (a train call) left. Within an iteration, dependencies are the data edges
// (DataflowGraph::parents).
struct IterationEdge {
  int from = 0, to = 0;
  int64_t lag = 1;
  bool operator==(const IterationEdge& o) const { return from == o.from && to == o.to && lag == o.lag; }
};
// Every call of a trained model reads the weights its train call left in the previous iteration (lag 1),
// except the generation, which reads those of iteration i-1-N (lag 1 + N, N = scheduled_staleness).
std::vector<IterationEdge> iteration_edges(const DataflowGraph& graph);

}  // namespace realign
