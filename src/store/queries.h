/* queries.h - the names of the statements in queries.sql, as an enum. */
#ifndef PCTL_STORE_QUERIES_H
#define PCTL_STORE_QUERIES_H

#define PCTL_QUERIES(X)                                                        \
    X(run_set_status)                                                          \
    X(phase_set_status)                                                        \
    X(step_set_status)                                                         \
    X(run_get_status)                                                          \
    X(phase_get_status)                                                        \
    X(step_get_status)                                                         \
    X(attempt_open)                                                            \
    X(attempt_close)                                                           \
    X(event_insert_status)                                                     \
    X(event_insert_admin)                                                      \
    X(run_count_event)                                                         \
    X(event_insert_run_note)                                                   \
    X(instance_mark_applied)                                                   \
    X(instance_remove_after_cleanup)                                           \
    X(run_next_queued)                                                         \
    X(steps_open)                                                              \
    X(phases_open)                                                             \
    X(run_active)                                                              \
    X(run_first_queued)                                                        \
    X(run_insert)                                                              \
    X(phase_insert)                                                            \
    X(step_insert)                                                             \
    X(phase_carry)                                                             \
    X(step_carry)                                                              \
    X(instance_by_name)                                                        \
    X(instance_insert)                                                         \
    X(instance_update)                                                         \
    X(instance_mark_deleting)                                                  \
    X(instance_delete)                                                         \
    X(instance_list)                                                           \
    X(def_by_name_version)                                                     \
    X(def_latest)                                                              \
    X(def_by_id)                                                               \
    X(def_body)                                                                \
    X(def_insert)                                                              \
    X(def_list)                                                                \
    X(run_for_retry)                                                           \
    X(run_latest_for_retry)                                                    \
    X(run_latest_of_plan)                                                      \
    X(run_of_instance)                                                         \
    X(run_queued_ids)                                                          \
    X(history)                                                                 \
    X(history_plan)                                                            \
    X(view_phases)                                                             \
    X(view_steps)                                                              \
    X(lease_get)                                                               \
    X(lease_put)                                                               \
    X(lease_token)                                                             \
    X(lease_beat)                                                              \
    X(lease_drop)                                                              \
    X(data_version)                                                            \
    X(active_runs)                                                             \
    X(active_phases)                                                           \
    X(active_steps)                                                            \
    X(step_set_task)                                                           \
    X(runs_open_any)                                                           \
    X(events_all)                                                              \
    X(events_instance)                                                         \
    X(events_run)                                                              \
    X(run_instance)                                                            \
    X(run_by_id)                                                               \
    X(view_attempts)                                                           \
    X(replay_all)                                                              \
    X(replay_instance)                                                         \
    X(instance_ids)                                                            \
    X(run_ids)                                                                 \
    X(gc_candidates)                                                           \
    X(gc_delete_run)                                                           \
    X(bundle_instance)                                                         \
    X(bundle_definitions)                                                      \
    X(bundle_runs)                                                             \
    X(bundle_phases)                                                           \
    X(bundle_steps)                                                            \
    X(bundle_attempts)                                                         \
    X(bundle_events)                                                           \
    X(archive_definitions)                                                     \
    X(archive_runs)                                                            \
    X(archive_phases)                                                          \
    X(archive_steps)                                                           \
    X(archive_attempts)                                                        \
    X(archive_events)                                                          \
    X(bundle_def_find)                                                         \
    X(bundle_def_insert)                                                       \
    X(bundle_instance_insert)                                                  \
    X(bundle_run_insert)                                                       \
    X(bundle_run_status)                                                       \
    X(bundle_run_retry_of)                                                     \
    X(bundle_phase_insert)                                                     \
    X(bundle_phase_status)                                                     \
    X(bundle_step_insert)                                                      \
    X(bundle_step_status)                                                      \
    X(bundle_attempt_insert)                                                   \
    X(bundle_event_insert)                                                     \
    X(verify_event_count)                                                      \
    X(bundle_count_events)                                                     \
    X(hint_instance_names)                                                     \
    X(hint_definition_names)                                                   \
    X(hint_plan_has_runs)

typedef enum pctl_query {
#define PCTL_X_(name) PCTL_Q_##name,
    PCTL_QUERIES(PCTL_X_)
#undef PCTL_X_
        PCTL_Q__COUNT
} pctl_query;

#endif
