"""QA evaluation shapes of the spec, field for field: evaluation, results, qaResponse and
answer items, speaker segments, protocol results and their evaluationData.

Absent values are null; arrays are always arrays (empty when there is nothing). Where the
spec gives no type, the README's type notes say what was chosen and why.
"""

from enum import StrEnum

from pydantic import Field

from psap.models import Number, Timestamp, WireModel
from psap.spring_page import SpringPage
from psap.training.models import PhaseEnrollmentSummary


class EvaluationStatus(StrEnum):
    """`PENDING` is the spec's; the others are ours (the spec shows no other value)."""

    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    ACKNOWLEDGED = "ACKNOWLEDGED"
    CLEARED = "CLEARED"


# ---------------------------------------------------------------- transcripts


class Word(WireModel):
    word: str | None = None
    start: Number | None = None
    end: Number | None = None
    score: Number | None = None


class SmoothedWord(WireModel):
    word_index: int | None = None
    original: str | None = None
    smoothed: str | None = None


class SpeakerSegment(WireModel):
    id: str | None = None
    start: Number | None = None
    end: Number | None = None
    sentiment_score: Number | None = None
    speaker_idx: Number | None = None
    channel: Number | None = None
    audio_offset: Number | None = None
    transcription_text: str | None = None
    sentiment: str | None = None
    speaker: str | None = None
    segment_kind: str | None = None
    object_key: str | None = None
    original_text: str | None = None
    words: list[Word] = Field(default_factory=list)
    smoothed_words: list[SmoothedWord] = Field(default_factory=list)
    identified_user_id: int | None = None


class ContextSource(WireModel):
    """A piece of the call the AI relied on; also the shape of an eventTimes segment."""

    speaker_segment: SpeakerSegment | None = None
    media_id: Number | None = None
    identified_speaker: bool | None = None
    identified_user_id: Number | None = None
    id: Number | None = None
    type: str | None = None
    content: str | None = None
    start: Number | None = None
    order: Number | None = None
    content_with_speaker: str | None = None


class AnswerItem(WireModel):
    id: Number | None = None
    media_id: Number | None = None
    identified_user_id: Number | None = None
    start: Number | None = None
    order: Number | None = None
    type: str | None = None
    content: str | None = None
    content_with_speaker: str | None = None
    identified_speaker: bool | None = None
    timestamp: Timestamp | None = None
    speaker_segment: SpeakerSegment | None = None


# ---------------------------------------------------------------- template and criteria


class EvaluationTemplate(WireModel):
    id: int | None = None
    name: str | None = None
    color: str | None = None
    sandbox_mode: bool | None = None
    sandbox_expires_at: Timestamp | None = None
    active: bool | None = None
    template_identifier: str | None = None
    version: int | None = None
    is_pdf_template: bool | None = None


class SkillArea(WireModel):
    id: int | None = None
    ref_id: str | None = None
    name: str | None = None
    description: str | None = None


class SmartTask(WireModel):
    id: int | None = None
    prompt: str | None = None
    context_sources: list[str] = Field(default_factory=list)
    additional_instructions: str | None = None
    override_generated_instructions: str | None = None
    type: str | None = None


class EvaluationTemplateCriteria(WireModel):
    id: int | None = None
    description: str | None = None
    order_index: int | None = None
    score: Number | None = None
    scoring_criteria_criticality_level_id: int | None = None
    parent_criteria_id: int | None = None
    type: str | None = None
    task_id: int | None = None
    skill_area: SkillArea | None = None
    smart_task: SmartTask | None = None


class QaResponse(WireModel):
    smart_task_id: int | None = None
    standard_criteria_id: str | None = None
    passing: bool | None = None
    explanation: str | None = None
    answer: list[AnswerItem] = Field(default_factory=list)


# ---------------------------------------------------------------- protocol results


class SelectionScoringBreakdown(WireModel):
    is_correct: bool | None = None
    ai_recommended_guidecard_id: int | None = None
    selected_guidecard_id: int | None = None
    justification: str | None = None


class Selection(WireModel):
    selected_guidecard_id: int | None = None
    selected_knowledge_id: int | None = None
    ai_recommended_guidecard_id: int | None = None
    ai_recommended_knowledge_id: int | None = None
    override_by: int | None = None
    is_correct: bool | None = None
    score: Number | None = None
    confidence: Number | None = None
    justification: str | None = None
    feedback: str | None = None
    override_by_name: str | None = None
    override_reason: str | None = None
    override_at: Timestamp | None = None
    scoring_breakdown: SelectionScoringBreakdown | None = None


class QuestionScoring(WireModel):
    includes_in_score: bool | None = None
    exclusion_reason: str | None = None
    question_weight: Number | None = None
    percent_contribution: Number | None = None
    point_value: Number | None = None


class QuestionItem(WireModel):
    question_id: Number | None = None
    parent_question_id: Number | None = None
    asked_at_seconds: Number | None = None
    answered_at_seconds: Number | None = None
    ai_score: Number | None = None
    override_by: Number | None = None
    reference_id: str | None = None
    question_text: str | None = None
    answer: str | None = None
    display_criteria: str | None = None
    low_quality_criteria: str | None = None
    high_quality_criteria: str | None = None
    ai_summary: str | None = None
    source: str | None = None
    override_by_name: str | None = None
    override_reason: str | None = None
    is_critical: bool | None = None
    is_optional: bool | None = None
    answered: bool | None = None
    condition_met: bool | None = None
    answered_unprompted: bool | None = None
    scoring: QuestionScoring | None = None
    asked_segment: SpeakerSegment | None = None
    answer_segment: SpeakerSegment | None = None
    override_at: Timestamp | None = None


class QuestionsScoringBreakdown(WireModel):
    total_questions: Number | None = None
    critical_questions: Number | None = None
    non_critical_questions: Number | None = None
    critical_answered: Number | None = None
    non_critical_answered: Number | None = None
    critical_weight: Number | None = None
    non_critical_weight: Number | None = None
    total_possible_weight: Number | None = None
    earned_weight: Number | None = None
    optional_questions: Number | None = None
    condition_not_met_questions: Number | None = None


class QuestionGroup(WireModel):
    """`questions` and `allCallers` of evaluationData."""

    questions: list[QuestionItem] = Field(default_factory=list)
    ai_explanation: str | None = None
    context_sources: list[ContextSource] = Field(default_factory=list)
    summary: str | None = None
    scoring_breakdown: QuestionsScoringBreakdown | None = None


class InstructionScoring(WireModel):
    instruction_weight: Number | None = None
    percent_contribution: Number | None = None
    point_value: Number | None = None


class InstructionItem(WireModel):
    instruction_id: int | None = None
    reference_id: str | None = None
    instruction_text: str | None = None
    ai_summary: str | None = None
    override_by_name: str | None = None
    override_reason: str | None = None
    is_critical: bool | None = None
    delivered: bool | None = None
    score: Number | None = None
    delivered_segment: SpeakerSegment | None = None
    scoring: InstructionScoring | None = None
    override_by: int | None = None
    override_at: Timestamp | None = None


class InstructionsScoringBreakdown(WireModel):
    total_instructions: Number | None = None
    critical_instructions: Number | None = None
    non_critical_instructions: Number | None = None
    critical_delivered: Number | None = None
    non_critical_delivered: Number | None = None
    critical_weight: Number | None = None
    non_critical_weight: Number | None = None
    total_possible_weight: Number | None = None
    earned_weight: Number | None = None


class InstructionGroup(WireModel):
    """`preArrival` of evaluationData."""

    instructions: list[InstructionItem] = Field(default_factory=list)
    ai_explanation: str | None = None
    context_sources: list[ContextSource] = Field(default_factory=list)
    scoring_breakdown: InstructionsScoringBreakdown | None = None


class Assist(WireModel):
    requested_knowledge_section_id: int | None = None
    requested_knowledge_id: int | None = None
    assistant_identifier: str | None = None
    requested_guidecard_name: str | None = None
    diverged: bool | None = None


class EvaluationData(WireModel):
    protocol_name: str | None = None
    knowledge_id: int | None = None
    knowledge_version_id: int | None = None
    knowledge_section_id: int | None = None
    all_callers_knowledge_id: int | None = None
    all_callers_knowledge_version_id: int | None = None
    all_callers_knowledge_section_id: int | None = None
    final_score: Number | None = None
    selection_score: Number | None = None
    questions_score: Number | None = None
    pre_arrival_score: Number | None = None
    all_callers_score: Number | None = None
    selection: Selection | None = None
    questions: QuestionGroup | None = None
    all_callers: QuestionGroup | None = None
    pre_arrival: InstructionGroup | None = None
    assist: Assist | None = None


class ProtocolResult(WireModel):
    id: int | None = None
    percent_score: Number | None = None
    guide_card_name: str | None = None
    is_edited: bool | None = None
    override_by: int | None = None
    override_by_name: str | None = None
    override_reason: str | None = None
    override_at: Timestamp | None = None
    evaluation_data: EvaluationData | None = None


# ---------------------------------------------------------------- evaluation


class EvaluationResult(WireModel):
    id: int | None = None
    event_id: int | None = None
    user_id: int | None = None
    evaluation_template_criteria: EvaluationTemplateCriteria | None = None
    score: Number | None = None
    total_possible_score: Number | None = None
    manual_input_value: Number | None = None
    speed_seconds: Number | None = None
    is_passing: bool | None = None
    override_ai_original_result: bool | None = None
    classification: str | None = Field(default=None, description="e.g. STRENGTH")
    comment: str | None = None
    explanation: str | None = None
    override_reason: str | None = None
    override_by: int | None = None
    qa_response: QaResponse | None = None
    protocol_results: list[ProtocolResult] = Field(default_factory=list)


class VariableValue(WireModel):
    value: str | None = None
    variable: str | None = None
    explanation: str | None = None
    original_value: str | None = None
    override_reason: str | None = None
    index: int | None = None
    override_by: int | None = None
    override_at: Timestamp | None = None


class EventSummary(WireModel):
    summary: str | None = None
    variable_values: list[VariableValue] = Field(default_factory=list)


class EventTime(WireModel):
    explanation: str | None = None
    name: str | None = None
    seconds: Number | None = None
    segment: ContextSource | None = None


class EventTimes(WireModel):
    times: list[EventTime] = Field(default_factory=list)


class QaEvaluation(WireModel):
    id: int
    event_id: int | None = None
    user_id: int | None = None
    event_personnel_id: int | None = None
    completed_by: int | None = None
    status: EvaluationStatus | None = None
    evaluation_template: EvaluationTemplate | None = None
    results: list[EvaluationResult] = Field(default_factory=list)
    event_summary: EventSummary | None = None
    event_times: EventTimes | None = None
    scale_score_level: str | None = None
    clear_reason: str | None = None
    raw_percent_score: Number | None = None
    earned_score: Number | None = None
    total_possible_score: Number | None = None
    is_points_off: bool | None = None
    deleted: bool | None = None
    is_training: bool | None = None
    is_sandbox: bool | None = None
    has_override: bool | None = None
    low_transcription_quality: bool | None = None
    created_at: Timestamp | None = None
    phase_enrollments: list[PhaseEnrollmentSummary] = Field(default_factory=list)


class EvaluationPage(SpringPage[QaEvaluation]):
    """Spring-style page whose content is evaluations."""
