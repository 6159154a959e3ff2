#pragma once
// One function per schedule family; each lives in its own .cpp beside this header.
#include "schedules/generator.hpp"

namespace pipesim {

Schedule make_gpipe(const ScheduleParams& params);
Schedule make_1f1b(const ScheduleParams& params);
Schedule make_interleaved(const ScheduleParams& params);
Schedule make_zb_h1(const ScheduleParams& params);
Schedule make_zb_h2(const ScheduleParams& params);
Schedule make_chimera(const ScheduleParams& params);
Schedule make_pipedream(const ScheduleParams& params);
Schedule make_pipedream_2bw(const ScheduleParams& params);
Schedule make_async_1f1b(const ScheduleParams& params);
Schedule make_amp(const ScheduleParams& params);
Schedule make_amdp(const ScheduleParams& params);
Schedule make_dualpipe(const ScheduleParams& params);
Schedule make_dualpipev(const ScheduleParams& params);
Schedule make_looped_bfs(const ScheduleParams& params);
Schedule make_interleaved_zb(const ScheduleParams& params);
Schedule make_zb_v(const ScheduleParams& params);
Schedule make_v_half(const ScheduleParams& params);
Schedule make_v_min(const ScheduleParams& params);

}  // namespace pipesim
