"""Demo resource-center catalog for the local stack: a few hundred items for 911 work.

Coaching content (protocol refreshers and call-review scenarios per call type, call-taking,
radio, QA and wellness coaching) and help articles (CAD how-tos, mapping and location,
phones and text, platform help, quick-reference cards, troubleshooting). Deterministic: the
same records every run, so the labeled relevance set (tests/data) can name items by
externalId. Loaded through the same JSON Lines import as the admin CLI, then indexed
in-process so that search works as soon as the stack is up.
"""

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psap.clock import utc_now
from psap.config import resource_center_table, search_index_bucket
from psap.resource_center import catalog, store

if TYPE_CHECKING:
    from psap.resource_center.engine.artifact import IndexArtifact
    from psap.resource_center.models import CatalogItem

COACHING = "COACHING_CONTENT"
HELP = "HELP_ARTICLE"
SITE = "https://resources.example.com"
THUMBNAILS = "https://cdn.example.com/resource-center/thumbnails"

# Licenses the demo catalog uses; tenant 1 holds the first two, tenant 2 the first only.
PROTOCOL_LICENSE = "Protocol Coaching Library"
REVIEW_LICENSE = "Call Review Library"
WELLNESS_LICENSE = "Telecommunicator Wellness Series"
NG911_LICENSE = "NG911 Toolkit"
DEMO_LICENSES: dict[int, tuple[str, ...]] = {0: (PROTOCOL_LICENSE, REVIEW_LICENSE), 1: ()}
# Embeddings of an earlier demo index (git-ignored): a restart re-embeds only what changed.
CACHE_FOLDER = Path(__file__).resolve().parent.parent / ".local" / "cache"
EMBEDDING_CACHE = CACHE_FOLDER / "resource-center-demo-index.npz"
# Items left unpublished (drafts): never searchable.
DRAFTS = frozenset({"coach-draft-radio-codes-2027", "help-draft-cad-upgrade-notes"})


@dataclass(frozen=True)
class Protocol:
    slug: str
    name: str
    also: str  # what callers and call-takers also call it
    scenario: str
    questions: tuple[str, ...]
    instructions: tuple[str, ...]
    pitfalls: tuple[str, ...]


P = Protocol
PROTOCOLS: tuple[Protocol, ...] = (
    P(
        "cardiac-arrest",
        "Cardiac Arrest",
        "not breathing, unresponsive, no pulse, collapsed, agonal breathing",
        "A wife finds her husband collapsed in the kitchen and says he is gasping",
        (
            "Is the patient awake and able to talk to you?",
            "Is the patient breathing normally?",
            "Can you get the patient flat on their back on the floor?",
            "Is there an AED available nearby?",
        ),
        (
            "Start compressions in the center of the chest, hard and fast, 100 to 120 a minute",
            "Push down at least two inches and let the chest come all the way back up",
            "Count out loud with the caller and do not stop until help takes over",
            "Send someone for the AED and follow its voice prompts",
        ),
        (
            "Treating agonal gasps as normal breathing delays CPR",
            "Asking too many questions before starting compressions",
            "Letting the caller stop compressions to answer questions",
        ),
    ),
    P(
        "choking",
        "Choking",
        "airway obstruction, cannot breathe, something stuck in throat, Heimlich",
        "A restaurant manager reports a diner who cannot speak and is clutching his throat",
        (
            "Can the person cough, speak or cry?",
            "Is the person an adult, a child or an infant?",
            "Is the person pregnant or too large to reach around?",
            "Has the person become unconscious?",
        ),
        (
            "For a conscious adult or child give abdominal thrusts just above the navel",
            "For an infant give five back blows and five chest thrusts",
            "If the person becomes unconscious lower them to the floor and start CPR",
            "Look in the mouth before rescue breaths and remove an object only if you see it",
        ),
        (
            "Telling a caller to do abdominal thrusts on an infant",
            "Not switching to CPR instructions when the patient goes unconscious",
        ),
    ),
    P(
        "stroke",
        "Stroke",
        "CVA, facial droop, slurred speech, weakness on one side, BE FAST",
        "A daughter calls because her mother's speech suddenly became slurred at breakfast",
        (
            "When was the patient last known to be normal?",
            "Ask the patient to smile: does one side of the face droop?",
            "Ask the patient to raise both arms: does one drift down?",
            "Ask the patient to repeat a simple sentence: is the speech slurred or strange?",
            "Is there sudden loss of balance or vision?",
        ),
        (
            "Do not give the patient anything to eat or drink",
            "Keep the patient in a comfortable position and note the time symptoms started",
            "Gather the patient's medications for the responding crew",
        ),
        (
            "Not recording the last-known-well time, which decides stroke center treatment",
            "Accepting 'a while ago' instead of a clock time",
        ),
    ),
    P(
        "chest-pain",
        "Chest Pain",
        "heart attack, myocardial infarction, cardiac symptoms, pressure in the chest",
        "A 58-year-old man reports crushing chest pressure that spreads to his left arm",
        (
            "Is the patient breathing normally and completely alert?",
            "Is the patient changing color or sweating heavily?",
            "Does the patient have a history of heart problems?",
            "Has the patient taken any medication for the pain, such as nitroglycerin?",
            "Has the patient used cocaine or other drugs in the last 12 hours?",
        ),
        (
            "Have the patient stop all activity and sit in the most comfortable position",
            "If the patient is not allergic and has no bleeding problems, aspirin may be advised",
            "Unlock the door and gather the patient's medications",
            "Call back immediately if the patient becomes less awake",
        ),
        (
            "Skipping the aspirin questions required by the protocol",
            "Not anticipating cardiac arrest and preparing the caller for CPR",
        ),
    ),
    P(
        "breathing-problems",
        "Breathing Problems",
        "shortness of breath, difficulty breathing, asthma attack, COPD, wheezing",
        "A teenager calls during an asthma attack and can only speak in single words",
        (
            "Is the patient able to speak in full sentences?",
            "Is the patient changing color, blue or gray around the lips?",
            "Does the patient have asthma or another lung problem?",
            "Does the patient have a prescribed inhaler or home oxygen?",
        ),
        (
            "Help the patient use their prescribed inhaler",
            "Let the patient sit up in the position that makes breathing easiest",
            "Keep the patient calm and avoid exertion",
        ),
        (
            "Missing 'difficulty speaking between breaths' as a priority symptom",
            "Telling the patient to lie flat",
        ),
    ),
    P(
        "anaphylaxis",
        "Allergic Reaction and Anaphylaxis",
        "allergic reaction, bee sting, peanut allergy, hives, swelling, EpiPen",
        "A mother reports her son ate a cookie with peanuts and his lips are swelling",
        (
            "Is the patient having any difficulty breathing or swallowing?",
            "What was the patient exposed to, and when?",
            "Does the patient have an epinephrine auto-injector?",
            "Is there swelling of the face, lips or tongue, or hives?",
        ),
        (
            "Help the patient use their epinephrine auto-injector in the outer thigh",
            "Note the time the auto-injector was given",
            "Have the patient lie down unless breathing is easier sitting up",
        ),
        (
            "Delaying epinephrine while waiting for the ambulance",
            "Underestimating a reaction that is getting worse quickly",
        ),
    ),
    P(
        "diabetic",
        "Diabetic Emergency",
        "low blood sugar, hypoglycemia, high blood sugar, insulin reaction, diabetic shock",
        "A coworker calls about a diabetic colleague who is confused and sweating",
        (
            "Is the patient completely alert?",
            "Is the patient behaving normally now?",
            "Is the patient able to swallow safely?",
            "Has the patient checked their blood sugar, and what was the reading?",
        ),
        (
            "If the patient is awake and can swallow, give sugar such as juice or regular soda",
            "Do not give anything by mouth to a patient who is not fully awake",
            "Stay with the patient and call back if they become less responsive",
        ),
        (
            "Giving food or drink to a patient who cannot protect their airway",
            "Assuming confusion is intoxication",
        ),
    ),
    P(
        "seizure",
        "Seizure",
        "convulsions, fitting, epilepsy, shaking uncontrollably, febrile seizure",
        "A caller watches a stranger on a bus shake uncontrollably and fall to the floor",
        (
            "Is the patient still seizing now?",
            "Is the patient breathing during or after the seizure?",
            "Is the patient epileptic or has the patient had seizures before?",
            "Is the patient pregnant or diabetic?",
        ),
        (
            "Move objects away so the patient cannot hit anything",
            "Do not put anything in the patient's mouth and do not restrain them",
            "After the seizure turn the patient on their side and check breathing",
            "Time the seizure",
        ),
        (
            "Telling callers to put something in the patient's mouth",
            "Not checking breathing once the seizure stops",
        ),
    ),
    P(
        "overdose",
        "Overdose and Poisoning",
        "opioid overdose, fentanyl, heroin, naloxone, Narcan, ingestion, poisoning",
        "A roommate finds a friend blue and barely breathing with a needle nearby",
        (
            "Is the patient awake and breathing normally?",
            "What did the patient take, how much, and when?",
            "Is naloxone (Narcan) available?",
            "Is the patient violent or is the scene unsafe?",
        ),
        (
            "Give naloxone nasal spray into one nostril if it is available",
            "If the patient is not breathing normally start CPR",
            "Put a breathing patient on their side in the recovery position",
            "Keep the containers or pills for the responders",
        ),
        (
            "Waiting for naloxone to work instead of starting CPR",
            "Forgetting responder safety with needles and unknown substances",
        ),
    ),
    P(
        "childbirth",
        "Childbirth and Delivery",
        "pregnancy, labor, baby coming, water broke, imminent delivery, newborn care",
        "A man calls from the shoulder of the interstate because his wife says the baby is coming",
        (
            "How many weeks pregnant is she?",
            "Is this her first delivery?",
            "How far apart are the contractions?",
            "Can you see any part of the baby now?",
            "Does she have the urge to push?",
        ),
        (
            "Have the mother lie on her back with knees bent and legs apart",
            "Support the baby's head as it delivers; do not pull",
            "Dry the baby and keep it warm against the mother's skin",
            "Do not cut or tie the cord",
        ),
        (
            "Not preparing towels and a warm place before the delivery",
            "Panic-driven questioning instead of step-by-step instructions",
        ),
    ),
    P(
        "drowning",
        "Drowning and Water Rescue",
        "near drowning, swimmer in distress, person in the water, pool accident",
        "A lifeguard-less pool party caller reports a child pulled from the deep end",
        (
            "Is the person still in the water?",
            "Is the person awake and breathing?",
            "Could there be a neck injury from diving?",
            "Is the caller trained to enter the water safely?",
        ),
        (
            "Reach or throw, do not go: use a pole or flotation device",
            "Once out of the water, start CPR with rescue breaths if not breathing",
            "If a diving injury is possible keep the head and neck still",
        ),
        (
            "Encouraging untrained callers to swim out to a victim",
            "Using compression-only CPR when rescue breaths are indicated",
        ),
    ),
    P(
        "bleeding",
        "Hemorrhage and Bleeding Control",
        "severe bleeding, laceration, cut, tourniquet, Stop the Bleed, arterial bleeding",
        "A carpenter calls after a table saw injury with blood spurting from his forearm",
        (
            "Where is the bleeding from?",
            "Is the bleeding serious, spurting or soaking through cloth?",
            "Is the patient completely alert?",
            "Does the patient take blood thinners?",
        ),
        (
            "Press firmly on the wound with a clean cloth and do not lift it to look",
            "If blood soaks through add more cloth on top and keep pressing",
            "For a limb wound that will not stop, apply a tourniquet above the wound",
            "Keep the patient lying down and warm",
        ),
        (
            "Letting the caller remove soaked dressings",
            "Not recognizing signs of shock",
        ),
    ),
    P(
        "falls",
        "Falls",
        "fell down, fall from height, elderly fall, slipped, lift assist",
        "An 84-year-old woman's life-alert pendant connects; she fell in the bathroom",
        (
            "How far did the patient fall?",
            "Is the patient completely alert?",
            "Is there any serious bleeding or obvious deformity?",
            "Was the fall caused by a medical problem such as dizziness?",
        ),
        (
            "Tell the patient not to move if they have neck or back pain",
            "Keep the patient warm",
            "Do not help a patient up who has hip pain or cannot move a leg",
        ),
        (
            "Treating falls as lift assists without screening for injury",
            "Missing the medical cause of the fall",
        ),
    ),
    P(
        "burns",
        "Burns and Scalds",
        "burn injury, scald, fire burn, chemical burn, electrical burn",
        "A parent reports a toddler pulled a pot of boiling water off the stove",
        (
            "Is the patient still in danger from fire, chemicals or electricity?",
            "How large is the burned area?",
            "Is there difficulty breathing or burns to the face?",
            "What caused the burn?",
        ),
        (
            "Cool the burn with cool running water for at least ten minutes",
            "Remove jewelry and clothing near the burn unless stuck to the skin",
            "Do not apply ice, butter or ointment",
            "Cover the burn loosely with a clean dry cloth",
        ),
        (
            "Recommending ice or home remedies",
            "Missing airway burns from smoke inhalation",
        ),
    ),
    P(
        "electrocution",
        "Electrocution",
        "electric shock, power line down, electrical injury, lightning strike",
        "A worker calls after a colleague touched a live wire and fell off a ladder",
        (
            "Is the patient still in contact with the electrical source?",
            "Is the power off?",
            "Is the patient breathing?",
            "Did the patient fall?",
        ),
        (
            "Do not touch the patient until the power is off",
            "Stay at least 30 feet away from downed power lines",
            "Once safe, start CPR if the patient is not breathing",
        ),
        (
            "Sending callers to touch a patient still in contact with power",
            "Forgetting to notify the utility company",
        ),
    ),
    P(
        "heat",
        "Heat Exhaustion and Heat Stroke",
        "heat illness, hyperthermia, sunstroke, overheating",
        "A coach reports a football player who collapsed at practice and is not sweating",
        (
            "Is the patient completely alert?",
            "Is the patient's skin hot and dry or cool and sweaty?",
            "How long was the patient in the heat?",
            "Is the patient able to drink?",
        ),
        (
            "Move the patient to a cool shaded place",
            "Remove extra clothing and cool the patient with water and fanning",
            "Give sips of water only if the patient is fully awake",
        ),
        (
            "Missing heat stroke because the patient is sweating",
            "Giving fluids to a confused patient",
        ),
    ),
    P(
        "cold",
        "Hypothermia and Cold Exposure",
        "frostbite, hypothermia, exposure, person found in the cold",
        "A snowplow driver finds a man lying in a snowbank, shivering and confused",
        (
            "Is the patient awake and talking?",
            "Is the patient shivering?",
            "How long was the patient exposed to the cold?",
            "Are the patient's clothes wet?",
        ),
        (
            "Move the patient to a warmer place and handle them gently",
            "Remove wet clothing and cover with dry blankets",
            "Do not rub frostbitten skin",
        ),
        (
            "Rough handling of a hypothermic patient",
            "Rewarming frostbite that may freeze again",
        ),
    ),
    P(
        "psychiatric",
        "Psychiatric Emergency and Suicidal Caller",
        "suicide, suicidal thoughts, mental health crisis, self-harm, 988",
        "A young man calls from a bridge and says he does not want to live anymore",
        (
            "Are you thinking about killing yourself?",
            "Do you have a plan, and the means with you right now?",
            "Have you taken anything or hurt yourself already?",
            "Is anyone with you?",
        ),
        (
            "Stay on the line and keep the caller talking",
            "Ask directly about suicide; it does not plant the idea",
            "Encourage the caller to move away from the means",
            "Know when to transfer to the 988 Suicide and Crisis Lifeline and when not to",
        ),
        (
            "Avoiding the word suicide",
            "Disconnecting a high-risk caller to transfer to another line",
        ),
    ),
    P(
        "unconscious",
        "Unconscious Person and Fainting",
        "passed out, fainted, syncope, unresponsive but breathing",
        "A store clerk reports a customer who fainted in the checkout line",
        (
            "Is the patient breathing normally?",
            "Is the patient awake now?",
            "Did the patient hit their head?",
            "Is the patient diabetic or pregnant?",
        ),
        (
            "If breathing, place the patient on their side",
            "Loosen tight clothing",
            "Be ready to start CPR if breathing changes",
        ),
        ("Assuming a faint is harmless without checking breathing",),
    ),
    P(
        "abdominal-pain",
        "Abdominal Pain",
        "stomach pain, belly ache, vomiting, appendicitis",
        "A caller has severe stomach pain and has been vomiting all night",
        (
            "Is the patient completely alert?",
            "Where exactly is the pain?",
            "Is the patient a woman between 12 and 50 who could be pregnant?",
            "Is there vomiting of blood or black stools?",
        ),
        (
            "Do not give the patient anything to eat or drink",
            "Let the patient lie in the most comfortable position",
        ),
        ("Missing possible ectopic pregnancy",),
    ),
    P(
        "traffic-collision",
        "Traffic Collision",
        "car accident, motor vehicle crash, MVC, wreck, vehicle rollover",
        "A driver calls about a two-car crash at an intersection with one car on its roof",
        (
            "Where exactly is the crash, including direction of travel?",
            "How many vehicles and how many people are hurt?",
            "Is anyone trapped or pinned?",
            "Are there hazards such as fire, leaking fuel or downed wires?",
        ),
        (
            "Stay in a safe place off the roadway",
            "Do not move injured people unless there is immediate danger",
            "Turn on hazard lights if it is safe to do so",
        ),
        (
            "Not getting the direction of travel on a divided highway",
            "Missing entrapment, which changes the response",
        ),
    ),
    P(
        "structure-fire",
        "Structure Fire",
        "house fire, building fire, smoke showing, apartment fire, people trapped",
        "A neighbor reports smoke pouring from a duplex and thinks someone is inside",
        (
            "What is the exact address, and what is burning?",
            "Is anyone trapped inside, and where?",
            "Is everyone out of the building?",
            "What kind of building is it and how many floors?",
        ),
        (
            "Get out and stay out; do not go back inside",
            "If trapped, close the door, put a wet cloth at the gap and signal from a window",
            "Stay low below the smoke",
        ),
        (
            "Not asking about trapped occupants early",
            "Letting the caller go back inside",
        ),
    ),
    P(
        "gas-leak",
        "Gas Leak and Carbon Monoxide",
        "natural gas odor, propane leak, carbon monoxide alarm, CO poisoning",
        "A family's carbon monoxide alarm is sounding and two children have headaches",
        (
            "Is anyone sick, dizzy or unconscious?",
            "Can you smell gas, or is a CO alarm sounding?",
            "Is everyone out of the building?",
        ),
        (
            "Leave the building now and leave the door open behind you",
            "Do not use light switches, phones or anything that could spark inside",
            "Wait for the fire department upwind",
        ),
        ("Keeping the caller inside to answer questions",),
    ),
    P(
        "hazmat",
        "Hazardous Materials Incident",
        "chemical spill, hazmat, toxic release, tanker leak, placard",
        "A truck driver reports a leaking tanker with an orange placard on the highway",
        (
            "What is the placard number or product name?",
            "Is anyone exposed or sick?",
            "Which way is the wind blowing?",
            "Is the product leaking, burning or in a waterway?",
        ),
        (
            "Stay uphill and upwind, well away from the spill",
            "Keep others away and do not touch the product",
            "Use the Emergency Response Guidebook to set the initial isolation distance",
        ),
        ("Sending callers closer to read a placard",),
    ),
    P(
        "domestic-violence",
        "Domestic Violence",
        "domestic disturbance, family fight, partner assault, protective order",
        "A whispering caller says her boyfriend is breaking things and she is hiding",
        (
            "Is the suspect still there, and where?",
            "Are there any weapons involved or in the house?",
            "Is anyone hurt?",
            "Are there children in the home?",
        ),
        (
            "If you cannot talk, stay on the line and answer yes or no",
            "Get to a room with a lock and a way out if you can",
            "Do not hang up",
        ),
        (
            "Not asking about weapons and relaying them to officers",
            "Missing a silent or coded call",
        ),
    ),
    P(
        "active-assailant",
        "Active Assailant",
        "active shooter, shots fired, armed intruder, run hide fight",
        "A teacher calls from a locked classroom hearing gunshots in the hallway",
        (
            "Where are you in the building, exactly?",
            "Where is the shooter and what do they look like?",
            "How many shooters and what weapons?",
            "How many people are with you and is anyone hurt?",
        ),
        (
            "Run if there is a safe way out; hide if there is not; fight only as a last resort",
            "Lock and barricade the door, silence phones and stay out of sight",
            "Keep the line open even if you cannot talk",
        ),
        (
            "Overloading the caller with questions instead of safety instructions",
            "Not relaying suspect description to responding units",
        ),
    ),
    P(
        "burglary",
        "Burglary in Progress",
        "break-in, intruder in the house, someone breaking in, home invasion",
        "An elderly man hears glass breaking downstairs in the middle of the night",
        (
            "Is the intruder still inside?",
            "Where are you in the house?",
            "Did you see a weapon?",
            "What does the intruder look like and which way did they go?",
        ),
        (
            "Go to a safe room and lock the door",
            "Stay quiet and stay on the line",
            "Do not confront the intruder",
        ),
        ("Not updating units with the intruder's movement",),
    ),
    P(
        "missing-child",
        "Missing Child",
        "lost child, child abduction, AMBER Alert, runaway",
        "A mother lost sight of her six-year-old at a crowded county fair",
        (
            "When and where was the child last seen?",
            "What is the child wearing?",
            "Does the child have a medical condition or disability?",
            "Is there any reason to believe the child was taken?",
        ),
        (
            "Stay where you are in case the child comes back",
            "Have someone search nearby places the child likes",
            "Gather a recent photo",
        ),
        ("Delaying the broadcast of the description",),
    ),
    P(
        "welfare-check",
        "Welfare Check",
        "check on the welfare, wellness check, not answering the phone, elderly alone",
        "A daughter out of state has not heard from her father in three days",
        (
            "When did anyone last talk to the person?",
            "Does the person have medical problems?",
            "Is there any reason to think the person is a danger to self or others?",
            "Does anyone have a key?",
        ),
        ("Give the caller a callback number and what to expect",),
        ("Not asking about weapons or mental health history",),
    ),
    P(
        "animal-bite",
        "Animal Bites and Attacks",
        "dog bite, animal attack, rabies exposure, snake bite",
        "A jogger was bitten by a neighbor's dog and is bleeding from the leg",
        (
            "Is the animal still a danger?",
            "Where is the patient bitten and is there serious bleeding?",
            "What kind of animal was it?",
        ),
        (
            "Move away from the animal and keep others away",
            "Control bleeding with direct pressure",
            "For a snake bite keep the limb still and do not cut or suck the wound",
        ),
        ("Forgetting to notify animal control",),
    ),
    P(
        "pregnancy-complications",
        "Pregnancy Complications",
        "vaginal bleeding in pregnancy, miscarriage, preeclampsia, high-risk pregnancy",
        "A woman 30 weeks pregnant calls with heavy bleeding and cramping",
        (
            "How many weeks pregnant is she?",
            "Is there heavy bleeding?",
            "Is she having a seizure, severe headache or vision changes?",
        ),
        (
            "Have her lie on her left side",
            "Do not let her eat or drink",
            "Gather her prenatal records",
        ),
        ("Not recognizing seizures in pregnancy as eclampsia",),
    ),
    P(
        "headache",
        "Headache",
        "severe headache, worst headache of my life, migraine",
        "A caller has the sudden worst headache of her life after lifting weights",
        (
            "Is the patient completely alert?",
            "Did the headache start suddenly?",
            "Are there stroke signs such as weakness or slurred speech?",
        ),
        ("Keep the patient quiet and resting", "Do not give anything by mouth"),
        ("Missing a brain bleed behind a sudden severe headache",),
    ),
    P(
        "vehicle-fire",
        "Vehicle Fire",
        "car fire, engine fire, truck on fire",
        "A motorist reports flames from under the hood of her car on the highway",
        (
            "Is everyone out of the vehicle?",
            "Is the vehicle near buildings, brush or fuel pumps?",
            "What kind of vehicle is it: car, truck, electric or bus?",
        ),
        (
            "Get everyone at least 100 feet away and upwind",
            "Do not open the hood",
            "Do not go back for belongings",
        ),
        ("Not asking if the vehicle is electric, which changes firefighting",),
    ),
    P(
        "wildfire",
        "Wildfire and Brush Fire",
        "grass fire, brush fire, forest fire, smoke in the hills",
        "A hiker reports a column of smoke and a growing brush fire on a ridge",
        (
            "Where is the fire and how large is it?",
            "Is it moving, and toward what?",
            "Are any homes or people in the path?",
        ),
        (
            "Move away from the fire; never uphill of it, go across the slope or downhill",
            "Follow evacuation orders",
        ),
        ("Accepting vague locations without landmarks",),
    ),
    P(
        "elevator",
        "Elevator and Confined Space Rescue",
        "stuck in elevator, trapped in elevator, confined space",
        "An office worker is stuck between floors in an elevator with a claustrophobic coworker",
        (
            "Is anyone hurt or having a medical problem?",
            "How many people are in the elevator?",
            "Is there smoke or fire?",
        ),
        (
            "Stay calm and do not try to climb out",
            "Press the alarm button and wait for help",
        ),
        ("Not checking for medical problems among the trapped",),
    ),
)

# ---------------------------------------------------------------------------- coaching

SKILLS: tuple[tuple[str, str, str, str, str], ...] = (
    # (slug, category, title, summary, body)
    (
        "call-control",
        "Call-Taking Skills",
        "Taking Control of a Call",
        "Techniques to take charge of a chaotic call in the first ten seconds.",
        "Callers in crisis often talk over the call-taker. Use a calm, firm voice and the "
        "caller's name. Repetitive persistence means repeating the same instruction word for "
        "word until the caller complies. Explain why you are asking: help is already on the "
        "way while we talk. Do not match the caller's volume; lower your voice instead.",
    ),
    (
        "hysterical-caller",
        "Call-Taking Skills",
        "Calming a Hysterical Caller",
        "Repetitive persistence and reassurance for callers who are screaming or crying.",
        "A hysterical caller cannot process questions. Give one short instruction at a time. "
        "Tell the caller that you are going to help and need them to listen. Use repetitive "
        "persistence: repeat the same phrase until the caller responds. Once the caller is "
        "engaged, give a task such as checking breathing, which restores a sense of control.",
    ),
    (
        "active-listening",
        "Call-Taking Skills",
        "Active Listening on Emergency Calls",
        "Hear what the caller says, what they do not say, and what is in the background.",
        "Active listening means paying attention to background noise, tone and pauses. "
        "Shouting, a television or a barking dog tells you about the scene. Paraphrase "
        "critical facts back to the caller to confirm them. Avoid interrupting while the "
        "caller gives the location.",
    ),
    (
        "address-verification",
        "Call-Taking Skills",
        "Verifying the Location Every Time",
        "Why the address is the first and most important question, and how to confirm it.",
        "Never assume the ALI address is where the emergency is. Ask the address of the "
        "emergency, then verify it: repeat it back and ask for the nearest cross street or a "
        "landmark. For wireless calls compare the caller's answer with the Phase II location "
        "and its uncertainty radius. Confirm the municipality, because the same street name "
        "exists in several towns.",
    ),
    (
        "callback-number",
        "Call-Taking Skills",
        "Getting a Callback Number",
        "A verified callback number saves the call when it drops.",
        "Ask for and verify a callback number early on every call. Wireless ANI can be "
        "missing or belong to a non-service-initialized phone that cannot be called back. "
        "Read the number back digit by digit.",
    ),
    (
        "abandoned-calls",
        "Call-Taking Skills",
        "Handling Abandoned and Hang-Up Calls",
        "What to do when a 911 call disconnects before anyone speaks.",
        "Treat every abandoned call as a possible emergency. Call back using the ANI, leave "
        "a message if there is no answer, and follow your agency's policy for sending a unit "
        "to the ALI location. Note pocket dials separately from silent open lines, where you "
        "should listen for background sounds.",
    ),
    (
        "silent-calls",
        "Call-Taking Skills",
        "Silent and Open-Line Calls",
        "When the caller cannot speak: listening, yes-no questions and tone prompts.",
        "A silent open line may be a caller who cannot speak safely. Ask the caller to press "
        "a key if they need help, and ask yes or no questions. Listen for voices, names and "
        "addresses in the background and document them. Offer text-to-911 if available.",
    ),
    (
        "interpreter",
        "Call-Taking Skills",
        "Using a Language Interpreter Line",
        "Conference in an interpreter quickly for callers with limited English.",
        "When a caller has limited English proficiency, identify the language and "
        "conference the interpreter service without disconnecting. Speak to the caller, not "
        "to the interpreter, in short sentences. Get the address first in case the call "
        "drops.",
    ),
    (
        "tty-etiquette",
        "Call-Taking Skills",
        "TTY and TDD Calls From Deaf and Hard-of-Hearing Callers",
        "Recognize TTY tones and answer with the TTY every time a call is silent.",
        "Deaf, hard of hearing and speech-disabled callers may use a TTY (also called TDD). "
        "Answer silent calls with the TTY, type GA for go ahead, and use short questions. "
        "The ADA requires direct, equal access: never ask the caller to use a relay service "
        "instead.",
    ),
    (
        "text-conversation",
        "Call-Taking Skills",
        "Text-to-911 Conversations",
        "Writing short, clear texts and getting the location when the caller cannot talk.",
        "Text sessions are slower than voice. Ask the location first and send one question "
        "per message. Avoid abbreviations and slang. Confirm whether it is safe for the "
        "caller to receive a voice callback. Tell the caller help is on the way.",
    ),
    (
        "children-callers",
        "Call-Taking Skills",
        "Talking With Child Callers",
        "Simple words and reassurance when the person calling 911 is a child.",
        "Children can be excellent callers if you use simple words. Ask their name and age, "
        "and whether a grown-up is nearby. Give one small task at a time and praise them. "
        "Ask them to look for the address on mail or a package.",
    ),
    (
        "elderly-callers",
        "Call-Taking Skills",
        "Elderly and Hard-of-Hearing Callers",
        "Patience, clear speech and checking understanding with older callers.",
        "Speak slowly and clearly without shouting. Confirm understanding by asking the "
        "caller to repeat instructions. Ask about hearing aids, medical alert devices and "
        "whether a door is unlocked for responders.",
    ),
    (
        "third-party",
        "Call-Taking Skills",
        "Third-Party and Fourth-Party Callers",
        "When the caller is not with the patient: alarm companies, relatives, other centers.",
        "A third-party caller may not know the patient's condition. Get their callback "
        "number and the patient's phone number, and call the patient directly if possible. "
        "For alarm companies get the alarm type, zone and keyholder information.",
    ),
    (
        "empathy",
        "Call-Taking Skills",
        "Empathy and Customer Service on 911",
        "Courtesy that builds trust without slowing the call.",
        "Professional courtesy keeps callers cooperative. Acknowledge the caller's fear, "
        "avoid sarcasm and jargon, and explain what happens next. Courtesy and speed are not "
        "opposites: a caller who trusts you follows instructions faster.",
    ),
    (
        "hoax-swatting",
        "Call-Taking Skills",
        "Recognizing Swatting and Hoax Calls",
        "Indicators of a swatting call and how to respond without ignoring a real emergency.",
        "Swatting calls often come through relay services, VoIP or non-emergency lines, "
        "describe extreme violence, and have odd background noise. Ask detailed questions, "
        "check premise history, and relay your concerns to officers while still treating "
        "the call as real.",
    ),
    (
        "rural-locations",
        "Call-Taking Skills",
        "Rural Addresses, Landmarks and Mile Markers",
        "Finding callers on rural roads, highways, trails and waterways.",
        "On highways ask for the direction of travel, the last exit and the mile marker. On "
        "rural roads ask for landmarks, fire numbers and the color of the mailbox. For "
        "hikers use trail names and coordinates from the caller's phone.",
    ),
    (
        "multiple-callers",
        "Call-Taking Skills",
        "Many Calls About the Same Incident",
        "Handling a flood of calls about one major incident without missing a new one.",
        "During a major fire or crash many callers report the same thing. Ask each caller "
        "for the location first, then ask whether they are calling about that incident. "
        "Listen for new information such as a second vehicle or a trapped person.",
    ),
    (
        "call-prioritization",
        "Call-Taking Skills",
        "Prioritizing Calls and Response Levels",
        "Deciding what is life-threatening now and what can wait.",
        "Priority depends on threat to life, property and whether the event is in progress. "
        "Use protocol determinants for medical calls. Document why you upgraded or downgraded "
        "a priority.",
    ),
    (
        "narratives",
        "Call-Taking Skills",
        "Writing Clear Incident Narratives",
        "CAD notes responders can read at a glance.",
        "Write narratives in short factual statements. Put weapons, hazards and suspect "
        "descriptions at the top. Avoid abbreviations your field units do not know. Update "
        "the narrative as new information comes in and flag critical updates.",
    ),
    (
        "officer-safety",
        "Radio and Dispatch",
        "Relaying Officer Safety Information",
        "Weapons, history and hazards responders need before they arrive.",
        "Officer safety information includes weapons, violent history, dogs, and the "
        "number of people on scene. Check premise and person history and broadcast it "
        "before arrival. Repeat critical updates even if you think units heard them.",
    ),
    (
        "radio-discipline",
        "Radio and Dispatch",
        "Radio Discipline and Plain Language",
        "Clear, brief radio traffic and when to use plain language over codes.",
        "Key up, pause, then speak. Keep transmissions short and use plain language for "
        "multi-agency incidents, as NIMS recommends. Acknowledge every transmission and use "
        "unit identifiers consistently.",
    ),
    (
        "phonetics",
        "Radio and Dispatch",
        "Phonetic Alphabet for Plates and Names",
        "Spelling license plates and names over the radio without errors.",
        "Use the phonetic alphabet (Adam, Boy, Charles or Alpha, Bravo, Charlie according to "
        "agency policy) for plates and names. Say numbers digit by digit.",
    ),
    (
        "unit-status",
        "Radio and Dispatch",
        "Tracking Unit Status and Welfare Checks on Officers",
        "Status timers and checking on units that have not reported.",
        "Keep every unit's status current in CAD. Use status timers to prompt officer "
        "welfare checks on traffic stops and scene time. If a unit does not answer, "
        "escalate according to policy.",
    ),
    (
        "mutual-aid",
        "Radio and Dispatch",
        "Requesting Mutual Aid",
        "When and how to request resources from neighboring agencies.",
        "Request mutual aid early for working fires, mass casualty incidents and "
        "specialized teams. Know your agreements, the talk groups used for interoperability, "
        "and how to track outside units in CAD.",
    ),
    (
        "mci",
        "Radio and Dispatch",
        "Dispatching a Mass Casualty Incident",
        "The telecommunicator's role in MCI triage, staging and hospital notification.",
        "At a mass casualty incident establish staging, notify hospitals, track transport "
        "units and keep a separate talk group for the incident. Expect many calls from the "
        "scene and from families.",
    ),
    (
        "pursuits",
        "Radio and Dispatch",
        "Dispatching a Vehicle Pursuit",
        "Managing the radio during a pursuit: location, speed, direction and traffic.",
        "During a pursuit clear the channel, repeat location, direction and speed, alert "
        "neighboring agencies, and keep supervisors informed so they can decide whether to "
        "terminate.",
    ),
    (
        "qa-scores",
        "Quality Assurance",
        "Understanding Your QA Evaluation",
        "How QA scores are calculated and what the criteria mean.",
        "Each QA evaluation scores a call against the template's criteria: address "
        "verification, protocol compliance, pre-arrival instructions and customer service. "
        "Critical criteria weigh more. Read the evaluator's comments on each failed "
        "criterion and the transcript segment it cites.",
    ),
    (
        "qa-feedback",
        "Quality Assurance",
        "Using QA Feedback to Improve",
        "Turning evaluations into a personal improvement plan.",
        "Look for patterns across several evaluations rather than one call. Pick one skill "
        "to improve at a time, practice it with your training officer, and ask for a "
        "follow-up review.",
    ),
    (
        "protocol-compliance",
        "Quality Assurance",
        "Protocol Compliance: Asking Every Key Question",
        "Why skipping questions lowers scores and can change the response.",
        "Protocols are designed so that each key question changes the determinant or the "
        "instructions. Asking every question in order, verbatim, keeps the response level "
        "correct and protects you.",
    ),
    (
        "cto-tips",
        "Quality Assurance",
        "Tips for Communications Training Officers",
        "Coaching trainees through daily observation reports and phase sign-offs.",
        "Training officers document performance daily, coach one skill at a time, and sign "
        "off tasks as trainees complete them. Give specific feedback tied to calls and "
        "recognize progress.",
    ),
    (
        "critical-stress",
        "Wellness and Resilience",
        "Critical Incident Stress After a Bad Call",
        "Recognizing stress reactions and using peer support and CISM.",
        "Telecommunicators experience the same trauma as field responders. After a bad call "
        "you may feel numb, replay the call or lose sleep. Use peer support, the critical "
        "incident stress management team and your employee assistance program.",
    ),
    (
        "shift-sleep",
        "Wellness and Resilience",
        "Sleep and Shift Work",
        "Getting enough sleep on rotating and night shifts.",
        "Keep a dark, cool bedroom, use blackout curtains and a consistent pre-sleep "
        "routine, limit caffeine late in the shift, and plan naps before night shifts.",
    ),
    (
        "vicarious-trauma",
        "Wellness and Resilience",
        "Vicarious Trauma and Burnout",
        "Signs of cumulative stress and compassion fatigue in dispatchers.",
        "Cumulative exposure to other people's emergencies leads to compassion fatigue and "
        "burnout. Warning signs include cynicism, irritability and withdrawal. Protect "
        "yourself with breaks, exercise, peer support and counseling.",
    ),
    (
        "peer-support",
        "Wellness and Resilience",
        "Building a Peer Support Program",
        "How a center starts and runs a peer support team.",
        "A peer support team trains volunteers to check on colleagues after critical "
        "incidents, keeps conversations confidential and connects people to professional "
        "help when needed.",
    ),
    (
        "breathing-exercise",
        "Wellness and Resilience",
        "Tactical Breathing Between Calls",
        "A one-minute box breathing exercise to reset after a stressful call.",
        "Box breathing: inhale for four counts, hold for four, exhale for four, hold for "
        "four. Repeat four times between calls to lower your heart rate.",
    ),
)


@dataclass(frozen=True)
class Article:
    slug: str
    category: str
    title: str
    summary: str
    steps: tuple[str, ...]
    note: str = ""
    license: str | None = None


A = Article
ARTICLES: tuple[Article, ...] = (
    # ------------------------------------------------------------ CAD how-to
    A(
        "cad-create-incident",
        "CAD How-To",
        "Creating a New Incident in CAD",
        "Enter a new call for service with location, type and priority.",
        (
            "Press F2 or choose Incident > New to open the call entry form",
            "Enter the location; CAD validates it against the geofile and shows the map",
            "Choose the incident type and let CAD set the default priority",
            "Add the caller's name and callback number and type a narrative",
            "Press Enter to create the incident and send it to the dispatch queue",
        ),
        "Incidents created from a 911 call get ANI/ALI filled in automatically.",
    ),
    A(
        "cad-update-location",
        "CAD How-To",
        "Changing an Incident's Location",
        "Correct or update the address of an incident after it was created.",
        (
            "Open the incident and select Edit Location",
            "Enter the new address or pick a point on the map",
            "Confirm the geofile match and the new response area",
            "CAD asks whether to re-run unit recommendations for the new area",
        ),
        "Units already assigned receive the updated address on their mobile data terminals.",
    ),
    A(
        "cad-merge-duplicates",
        "CAD How-To",
        "Merging Duplicate Incidents",
        "Combine two incidents created for the same event by different call-takers.",
        (
            "Open the incident that will remain the primary",
            "Choose Incident > Merge and select the duplicate incident number",
            "Review the combined narrative, callers and units",
            "Confirm; the duplicate closes with disposition DUP and links to the primary",
        ),
        "Merging cannot be undone; cross-reference incidents instead if they are related but "
        "separate events.",
    ),
    A(
        "cad-cross-reference",
        "CAD How-To",
        "Cross-Referencing Related Incidents",
        "Link incidents that are related but must stay separate.",
        (
            "Open one of the incidents",
            "Choose Links > Add Cross-Reference and enter the other incident number",
            "Add a note explaining the relationship",
        ),
    ),
    A(
        "cad-add-narrative",
        "CAD How-To",
        "Adding Notes and Narrative Updates",
        "Append information to an incident's narrative and flag critical updates.",
        (
            "Select the incident and press F7 or choose Add Note",
            "Type the update; start with a hazard keyword to flag it",
            "Check Critical to push the note to every assigned unit with an alert tone",
        ),
        "Notes are time-stamped and cannot be edited after saving; add a correction note.",
    ),
    A(
        "cad-change-type",
        "CAD How-To",
        "Changing an Incident Type or Priority",
        "Upgrade or downgrade an incident when new information comes in.",
        (
            "Open the incident and choose Edit Type",
            "Pick the new type; CAD proposes the matching priority",
            "Override the priority if policy allows and enter a reason",
            "CAD logs the change and recommends additional units if needed",
        ),
    ),
    A(
        "cad-close-incident",
        "CAD How-To",
        "Closing an Incident With a Disposition",
        "Clear all units and close the incident with the correct disposition code.",
        (
            "Make sure every assigned unit is cleared",
            "Choose Close and select a disposition code such as REPORT, ADVISED or UNFOUNDED",
            "Add a closing note if required",
        ),
        "Reopening a closed incident is possible for 24 hours; after that create a new one.",
    ),
    A(
        "cad-reopen-incident",
        "CAD How-To",
        "Reopening a Closed Incident",
        "Bring back a recently closed incident when units return to the scene.",
        (
            "Search for the incident by number or address",
            "Choose Reopen and enter a reason",
            "Assign units as usual",
        ),
    ),
    A(
        "cad-dispatch-unit",
        "CAD How-To",
        "Dispatching Units to an Incident",
        "Assign recommended or chosen units and notify them.",
        (
            "Select the pending incident in the queue",
            "Review the recommended units or drag units from the status monitor",
            "Press Dispatch; units receive the call on their MDTs and station alerting tones",
            "Voice-dispatch the call on the radio as policy requires",
        ),
    ),
    A(
        "cad-unit-recommendation",
        "CAD How-To",
        "How Unit Recommendations Work",
        "Why CAD recommends the units it does: response plans, AVL and closest unit.",
        (
            "CAD reads the response plan for the incident type and the response area",
            "With AVL, the closest available units by drive time are proposed",
            "Out-of-service units and units on other calls are skipped",
            "You can override any recommendation; CAD records the override",
        ),
    ),
    A(
        "cad-unit-status",
        "CAD How-To",
        "Changing a Unit's Status",
        "Mark units en route, on scene, available or out of service.",
        (
            "Select the unit on the status monitor",
            "Use the status keys: ER en route, OS on scene, AV available, OOS out of service",
            "For out of service choose a reason such as maintenance or training",
            "Status changes from the MDT update the monitor automatically",
        ),
        "Status timers start on every change; an expired timer flashes the unit.",
    ),
    A(
        "cad-move-up",
        "CAD How-To",
        "Move-Ups and Station Coverage",
        "Cover empty stations during large incidents using move-up recommendations.",
        (
            "Open the Coverage view to see uncovered response areas",
            "Accept CAD's move-up recommendation or choose units yourself",
            "Dispatch the move-up; the unit's home station is temporarily changed",
        ),
    ),
    A(
        "cad-bolo",
        "CAD How-To",
        "Broadcasting a BOLO",
        "Send a be-on-the-lookout message with a description to field units.",
        (
            "Choose Messages > BOLO",
            "Enter the subject or vehicle description, plate and direction of travel",
            "Select the recipient groups and the expiration time",
            "Send; the BOLO appears on MDTs and in the BOLO list",
        ),
    ),
    A(
        "cad-premise-hazards",
        "CAD How-To",
        "Adding Premise Hazards and Caution Notes",
        "Flag addresses with dangers responders should know about.",
        (
            "Open Premise Information and search for the address",
            "Add a hazard such as dog, weapons, oxygen in use or hoarding",
            "Set a review date so old hazards do not linger",
        ),
        "Premise hazards display on every incident at that address and on units' MDTs.",
    ),
    A(
        "cad-search-history",
        "CAD How-To",
        "Searching Past Incidents and Premise History",
        "Find previous calls at an address or involving a person.",
        (
            "Open Query > Incident History",
            "Search by address, name, phone number, date range or incident type",
            "Open a result to read its full narrative and units",
        ),
    ),
    A(
        "cad-keyboard-shortcuts",
        "CAD How-To",
        "CAD Keyboard Shortcuts",
        "The function keys and command-line shortcuts that save time.",
        (
            "F2 new incident, F3 dispatch, F5 unit status, F7 add note",
            "Ctrl+M opens the map on the selected incident",
            "Type commands on the command line, for example DS E12 to dispatch Engine 12",
        ),
    ),
    A(
        "cad-command-line",
        "CAD How-To",
        "Using the CAD Command Line",
        "Dispatch and change statuses by typing commands instead of clicking.",
        (
            "Click the command line or press Ctrl+L",
            "DS unit incident dispatches; AV unit clears; OS unit marks on scene",
            "Press Tab to auto-complete unit and incident numbers",
        ),
    ),
    A(
        "cad-print-report",
        "CAD How-To",
        "Printing an Incident Report",
        "Print or export a complete incident record for a records request.",
        (
            "Open the incident and choose Reports > Incident Detail",
            "Select the sections to include: narrative, units, times, callers",
            "Print or export to PDF",
        ),
        "Redact personal information before releasing reports to the public.",
    ),
    A(
        "cad-shift-report",
        "CAD How-To",
        "Running Shift and Activity Reports",
        "Call volume, response times and unit activity for a shift.",
        (
            "Open Reports > Shift Summary",
            "Choose the date, shift and agency",
            "Export to a spreadsheet for further analysis",
        ),
    ),
    A(
        "cad-failover",
        "CAD How-To",
        "CAD Offline Mode and Failover",
        "What to do when CAD is down: manual cards and backup procedures.",
        (
            "If CAD stops responding, switch to the backup server using the failover shortcut",
            "If both are down, use paper run cards and log times manually",
            "After recovery, enter manual incidents in CAD with their real times",
        ),
    ),
    A(
        "cad-to-cad",
        "CAD How-To",
        "CAD-to-CAD Incident Transfer",
        "Send an incident to a neighboring center's CAD.",
        (
            "Open the incident and choose Transfer > CAD-to-CAD",
            "Select the receiving agency",
            "The receiving center accepts the incident; status updates flow both ways",
        ),
    ),
    A(
        "cad-unit-roster",
        "CAD How-To",
        "Setting Up the Daily Unit Roster",
        "Log units and personnel on at the start of a shift.",
        (
            "Open Roster > Shift Setup",
            "Assign personnel to units and set each unit's capabilities such as ALS or K9",
            "Log the units on; they appear available on the status monitor",
        ),
    ),
    A(
        "cad-station-alerting",
        "CAD How-To",
        "Station Alerting and Tones",
        "How dispatch triggers station alerting and how to re-tone.",
        (
            "Dispatching a fire or EMS unit sends tones to its station automatically",
            "To re-tone, select the unit and choose Alert Again",
            "Check the alerting status indicator for failures",
        ),
    ),
    A(
        "cad-quick-call",
        "CAD How-To",
        "Self-Initiated and Quick Calls",
        "Create incidents for traffic stops and officer-initiated activity.",
        (
            "Officers can create self-initiated incidents from the MDT",
            "Dispatchers use Quick Call with a unit, location and type",
            "Traffic stops require the plate and state",
        ),
    ),
    # ------------------------------------------------------------ mapping and location
    A(
        "map-find-address",
        "Mapping and Location",
        "Finding an Address on the Map",
        "Search the map by address, intersection, common place name or coordinates.",
        (
            "Type in the map search box: an address, two streets with an ampersand, or a "
            "place name",
            "For coordinates type latitude and longitude separated by a comma",
            "Select a result to center the map and drop a pin",
        ),
    ),
    A(
        "map-layers",
        "Mapping and Location",
        "Map Layers: Hydrants, Boundaries and Imagery",
        "Turn on hydrants, response boundaries, aerial imagery and other layers.",
        (
            "Open the Layers panel on the map",
            "Check the layers you need, such as hydrants, beat boundaries or aerial imagery",
            "Save the set as a favorite for your position",
        ),
    ),
    A(
        "map-avl",
        "Mapping and Location",
        "Tracking Units With AVL",
        "See units' live positions and breadcrumbs on the map.",
        (
            "Turn on the AVL layer",
            "Hover over a unit to see speed, heading and last update time",
            "Right-click a unit to show its breadcrumb trail for the last hour",
        ),
        "An AVL position older than two minutes is shown gray.",
    ),
    A(
        "map-geofence",
        "Mapping and Location",
        "Drawing a Geofence or Perimeter",
        "Draw an area on the map for evacuations, perimeters or alerts.",
        (
            "Choose Draw > Polygon and click around the area",
            "Name the area and link it to the incident",
            "Use Select Addresses to list every address inside for evacuation notification",
        ),
    ),
    A(
        "ali-rebid",
        "Mapping and Location",
        "Rebidding ALI for an Updated Wireless Location",
        "Request a newer Phase II location for a moving or imprecise wireless caller.",
        (
            "Select the active call and press Rebid (or ALI > Rebid)",
            "Wait 15 to 30 seconds between rebids for the carrier to update",
            "Compare the new location and uncertainty with the previous one on the map",
        ),
        "A Phase I location shows only the cell tower sector; rebid to get Phase II.",
    ),
    A(
        "phase2-location",
        "Mapping and Location",
        "Understanding Phase I and Phase II Wireless Location",
        "What the ALI location, confidence and uncertainty radius mean.",
        (
            "Phase I gives the tower and sector, not the caller",
            "Phase II gives the caller's latitude and longitude with an uncertainty radius",
            "Confidence is the probability the caller is inside the uncertainty circle",
            "Always verify the location verbally with the caller",
        ),
    ),
    A(
        "device-based-location",
        "Mapping and Location",
        "Device-Based Hybrid Location",
        "Using device-based location from smartphones alongside carrier ALI.",
        (
            "Device-based location appears as a separate marker from the handset's GPS and Wi-Fi",
            "It is usually more accurate than carrier Phase II",
            "Use it to guide questions, and still confirm the address verbally",
        ),
    ),
    A(
        "ng911-pidf-lo",
        "Mapping and Location",
        "NG911 Location: PIDF-LO and Civic Addresses",
        "How location arrives with NG911 calls in PIDF-LO and how CAD displays it.",
        (
            "NG911 calls carry location in a PIDF-LO object: civic address or geodetic shape",
            "The location is validated against the LVF and shown on the map",
            "Location updates arrive by dereference; press Refresh Location",
        ),
        license=NG911_LICENSE,
    ),
    A(
        "ng911-i3-overview",
        "Mapping and Location",
        "NG911 i3 Architecture for Telecommunicators",
        "ESInet, ECRF, LVF and the i3 call flow explained for the call-taker.",
        (
            "Calls route over the ESInet based on the caller's location using the ECRF",
            "The LVF validates civic addresses before calls are made",
            "Additional data such as medical information can arrive with the call",
        ),
        license=NG911_LICENSE,
    ),
    A(
        "z-axis",
        "Mapping and Location",
        "Vertical Location (Z-Axis) for Wireless Calls",
        "Reading floor-level information in multistory buildings.",
        (
            "Some wireless calls include a Z-axis altitude with uncertainty",
            "CAD converts the altitude to an estimated floor when building data exists",
            "Confirm the floor and apartment number with the caller",
        ),
    ),
    # ------------------------------------------------------------ phones and text
    A(
        "text-console",
        "Phones and Text",
        "Answering a Text-to-911 Session",
        "Accept, reply to and close text-to-911 conversations in the call-handling console.",
        (
            "An incoming text rings like a call with a text icon; press Answer",
            "Use the pre-written messages for the first question about location",
            "Type replies in the message box; the caller's location shows on the map",
            "End the session with the closing message so the caller knows",
        ),
    ),
    A(
        "text-transfer",
        "Phones and Text",
        "Transferring a Text-to-911 Session",
        "Send a text conversation to another PSAP without losing the history.",
        (
            "Choose Transfer in the text window",
            "Select the receiving PSAP; the transcript goes with the session",
            "Stay in the session until the other center confirms",
        ),
    ),
    A(
        "rtt-calls",
        "Phones and Text",
        "Real-Time Text (RTT) Calls",
        "Answering RTT calls, where characters appear as the caller types.",
        (
            "RTT calls show the text window automatically",
            "Text appears character by character; you can interrupt as on a voice call",
            "You can use voice and text in the same call",
        ),
    ),
    A(
        "tty-console",
        "Phones and Text",
        "Using the TTY in the Call-Handling Console",
        "Detect TTY tones and start a TTY conversation.",
        (
            "On a silent call press the TTY button to send a greeting",
            "Type messages and end each turn with GA",
            "Save the TTY transcript with the call record",
        ),
    ),
    A(
        "call-transfer",
        "Phones and Text",
        "Transferring a 911 Call to Another PSAP",
        "Use star codes and speed dials to transfer with ANI/ALI.",
        (
            "Tell the caller you are transferring and not to hang up",
            "Press the transfer speed dial for the receiving agency",
            "Stay on the line to introduce the caller, then drop off",
        ),
        "Always get the location and callback number before transferring.",
    ),
    A(
        "conference-call",
        "Phones and Text",
        "Conferencing in an Interpreter or Poison Control",
        "Add a third party to an active call.",
        (
            "Press Conference and dial the interpreter line or Poison Control",
            "Introduce the caller and the situation",
            "Stay on the line while the third party helps",
        ),
    ),
    A(
        "instant-recall",
        "Phones and Text",
        "Instant Recall Recorder Playback",
        "Replay the last minutes of a call to catch an address or name.",
        (
            "Open Instant Recall on your position",
            "Select the call and drag the slider to the moment you need",
            "Play at reduced speed to catch a hard-to-hear address",
        ),
    ),
    A(
        "recording-request",
        "Phones and Text",
        "Requesting a Call Recording Copy",
        "How to request a recording for court, QA or a records request.",
        (
            "Submit a recording request with the date, time and position",
            "Supervisors approve releases outside the agency",
            "Recordings are exported as audio files with a chain-of-custody log",
        ),
    ),
    A(
        "callback-abandoned",
        "Phones and Text",
        "Calling Back an Abandoned 911 Call",
        "Use the abandoned call list to return disconnected calls.",
        (
            "Open the Abandoned Calls list in the phone console",
            "Select a call and press Callback; the ANI is dialed automatically",
            "Record the outcome: no answer, message left, or emergency found",
        ),
    ),
    # ------------------------------------------------------------ platform help
    A(
        "platform-qa-view",
        "Platform Help",
        "Viewing Your QA Evaluations",
        "Find your quality assurance evaluations and read the scoring details.",
        (
            "Open Quality Assurance > My Evaluations",
            "Select an evaluation to see each criterion, its score and the comment",
            "Play the transcript segments the evaluator cited",
        ),
    ),
    A(
        "platform-qa-dispute",
        "Platform Help",
        "Disputing a QA Evaluation",
        "Ask for a review when you disagree with a score.",
        (
            "Open the evaluation and choose Request Review",
            "Explain which criterion you dispute and why",
            "Your supervisor reviews it; any override is recorded with a reason",
        ),
    ),
    A(
        "platform-qa-templates",
        "Platform Help",
        "Building QA Evaluation Templates",
        "Create evaluation templates with weighted and critical criteria.",
        (
            "Open Quality Assurance > Templates and choose New Template",
            "Add criteria, set their weights and mark critical ones",
            "Use sandbox mode to test a template before activating it",
        ),
    ),
    A(
        "platform-training-enrollment",
        "Platform Help",
        "Enrolling a Trainee in a Training Phase",
        "Start a new hire's phase training with task lists and a training officer.",
        (
            "Open Training > Phases and select the phase",
            "Choose Enroll, select the trainee and the training officer",
            "The trainee's task list appears with progress counters",
        ),
    ),
    A(
        "platform-task-signoff",
        "Platform Help",
        "Signing Off Training Tasks",
        "Training officers sign off completed tasks and submit a phase for approval.",
        (
            "Open the trainee's enrollment and the task list",
            "Mark tasks complete and add comments",
            "Submit the phase; it waits for the supervisor's sign-off",
        ),
    ),
    A(
        "platform-knowledge-api",
        "Platform Help",
        "Importing Guide Cards Through the Knowledge API",
        "Push guide cards and instruction cards from another system with the API.",
        (
            "Ask your administrator for a partner credential with Manage Knowledge",
            "POST each card to the knowledge endpoint with its externalId",
            "Each update appends a new immutable version; publish the version to use",
        ),
    ),
    A(
        "platform-guide-card-publish",
        "Platform Help",
        "Publishing a Guide Card Version",
        "Choose which version of a guide card call-takers see.",
        (
            "Open Knowledge and select the card",
            "Compare versions and choose Publish on the one to use",
            "Only one version is published at a time",
        ),
    ),
    A(
        "platform-api-credentials",
        "Platform Help",
        "Managing API Credentials",
        "Issue, rotate and revoke partner credentials for integrations.",
        (
            "Administrators issue credentials with only the permissions an integration needs",
            "Store the token when it is shown: it is never displayed again",
            "Revoke a credential immediately if it may have leaked",
        ),
    ),
    A(
        "platform-api-errors",
        "Platform Help",
        "API Errors: 401, 403 and 400 Explained",
        "What each error status means and how to fix the request.",
        (
            "401 Authentication required: the bearer token is missing, expired or revoked",
            "403 Access denied: the credential lacks the permission the message names",
            "400: a parameter or field is invalid; the info field names it",
        ),
    ),
    A(
        "platform-resource-center",
        "Platform Help",
        "Using the Resource Center",
        "Search coaching content and help articles and import them into your library.",
        (
            "Search with keywords or a plain-language question",
            "Licensed items can be imported into your center's library",
            "An update available badge means the catalog item changed since you imported it",
        ),
    ),
    A(
        "platform-licenses",
        "Platform Help",
        "Resource Center Licenses",
        "Which content needs a license and how to request one.",
        (
            "Items show the license they require; many help articles need none",
            "Your administrator can see which licenses your center holds",
            "Contact your account manager to add a license",
        ),
    ),
    A(
        "platform-cad-connector",
        "Platform Help",
        "Connecting Your CAD: Webhooks and Intake",
        "Set up the two-way CAD connection: incident intake and webhook updates.",
        (
            "Your CAD sends incidents to the intake endpoint with a customer API key",
            "Configure a webhook connector with your CAD's receiving URL",
            "Verify every webhook's HMAC signature and timestamp before trusting it",
        ),
    ),
    A(
        "platform-webhook-signatures",
        "Platform Help",
        "Verifying Webhook Signatures",
        "Check the X-SVC-Signature header with your signing secret.",
        (
            "Read the raw request body before parsing JSON",
            "Compute HMAC-SHA-256 over timestamp, delivery id and body joined by dots",
            "Compare in constant time and reject timestamps more than 300 seconds off",
            "Handle retries by delivery id: a retry keeps the same id and body",
        ),
    ),
    A(
        "platform-audit-export",
        "Platform Help",
        "Exporting the Audit Log",
        "Download who-did-what records for compliance reviews.",
        (
            "Open Administration > Audit Log",
            "Choose a date range and export",
            "Exports are delivered as files you can download for 7 days",
        ),
    ),
    A(
        "platform-media-ingest",
        "Platform Help",
        "Uploading Radio Traffic (SRT) for Review",
        "Ingest radio recordings with SRT transcripts for QA and incident review.",
        (
            "Upload the recording and its SRT subtitle file together",
            "The platform aligns transcript segments with the incident timeline",
            "Reviewers can search the transcript and jump to a segment",
        ),
    ),
    A(
        "platform-users",
        "Platform Help",
        "Managing Users and Roles",
        "Add telecommunicators, supervisors and training officers.",
        (
            "Open Administration > Users and choose Add User",
            "Assign roles; roles grant permissions such as Manage Phases",
            "Deactivate users who leave; their history is kept",
        ),
    ),
    A(
        "platform-sso",
        "Platform Help",
        "Signing In With Single Sign-On",
        "Use your agency's identity provider to sign in.",
        (
            "Choose Sign in with your agency",
            "Enter your agency email; you are redirected to your identity provider",
            "Ask your administrator if your account is not linked",
        ),
    ),
    A(
        "platform-notifications",
        "Platform Help",
        "Notification Settings",
        "Choose which alerts you receive by email or in the app.",
        (
            "Open your profile and Notifications",
            "Turn on alerts for new evaluations, sign-off requests and resource updates",
        ),
    ),
    # ------------------------------------------------------------ troubleshooting
    A(
        "ts-ali-missing",
        "Troubleshooting",
        "No ALI Data on a 911 Call",
        "What to do when a call arrives without a location or with 'record not found'.",
        (
            "Rebid ALI once; some carriers answer slowly",
            "Ask the caller for the location verbally",
            "Report repeated no-record-found calls to your 911 coordinator with the ANI",
        ),
    ),
    A(
        "ts-wrong-ali",
        "Troubleshooting",
        "ALI Shows the Wrong Address",
        "Report ALI discrepancies so the database gets corrected.",
        (
            "Use the address the caller gives you for the response",
            "File an ALI discrepancy report with the ANI, the ALI shown and the correct address",
        ),
    ),
    A(
        "ts-map-not-loading",
        "Troubleshooting",
        "The Map Does Not Load or Is Blank",
        "Fix a blank or frozen CAD map.",
        (
            "Press Ctrl+R to reload the map panel",
            "Check that the map server status indicator is green",
            "If imagery is missing but streets show, turn the imagery layer off and on",
        ),
    ),
    A(
        "ts-mdt-not-receiving",
        "Troubleshooting",
        "A Unit's MDT Is Not Receiving Calls",
        "Steps when a mobile data terminal stops getting dispatches.",
        (
            "Voice-dispatch the call so the unit is not delayed",
            "Check the unit's MDT connection status in the unit detail",
            "Ask the unit to restart the MDT application",
            "Open a ticket with IT if it does not reconnect",
        ),
    ),
    A(
        "ts-text-not-arriving",
        "Troubleshooting",
        "Text-to-911 Messages Are Not Arriving",
        "What to check when texts stop arriving or the caller says they were not received.",
        (
            "Check the text service status in the console",
            "Send a test message from the administrator test number",
            "If texts are delayed, call the caller back by voice when safe",
        ),
    ),
    A(
        "ts-login-locked",
        "Troubleshooting",
        "Locked Out of CAD or the Platform",
        "Reset a forgotten password or unlock an account.",
        (
            "After five failed attempts the account locks for 15 minutes",
            "Use Forgot Password to reset it with your agency email",
            "A supervisor can unlock the account from Administration > Users",
        ),
    ),
    A(
        "ts-password-reset",
        "Troubleshooting",
        "Resetting Your Password",
        "Change or reset your CAD and platform password.",
        (
            "Choose Forgot Password on the sign-in page",
            "Follow the link in the email within 30 minutes",
            "Choose a password of at least 14 characters that you have not used before",
        ),
    ),
    A(
        "ts-slow-cad",
        "Troubleshooting",
        "CAD Is Slow",
        "Things to check before calling IT when CAD responds slowly.",
        (
            "Close unused query windows and reports",
            "Check whether other positions are also slow",
            "Report the time and what you were doing to IT",
        ),
    ),
    A(
        "ts-audio-quality",
        "Troubleshooting",
        "Poor Audio or Echo on 911 Calls",
        "Fix headset and line audio problems at your position.",
        (
            "Check the headset connection and mute switch",
            "Try the backup headset jack",
            "Report persistent echo with the trunk number shown on the call",
        ),
    ),
    A(
        "ts-webhook-failures",
        "Troubleshooting",
        "Webhook Deliveries Are Failing",
        "Diagnose failed CAD webhook deliveries.",
        (
            "Open the connector's delivery log and look at the status of recent attempts",
            "401 or 403 from your CAD: check the bearer credential configured on the connector",
            "Signature failures: check the signing secret and that you verify the raw body",
            "Replay failed deliveries once fixed",
        ),
    ),
    A(
        "ts-import-failed",
        "Troubleshooting",
        "A Resource Center Import Failed",
        "What to do when importing an item into your library does not complete.",
        (
            "Check that your center holds the item's required license",
            "Retry the import; it is safe to repeat",
            "Contact support with the item id if it keeps failing",
        ),
    ),
)

DRAFT_RECORDS: tuple[dict[str, Any], ...] = (
    {
        "externalId": "coach-draft-radio-codes-2027",
        "itemType": COACHING,
        "title": "Draft: Radio Code Changes for 2027",
        "summary": "Not yet published: upcoming changes to radio codes.",
        "body": "Draft content about changes to ten codes and plain language radio policy.",
        "category": "Radio and Dispatch",
        "thumbnailUrl": None,
        "url": f"{SITE}/items/coach-draft-radio-codes-2027",
        "requiredLicenseName": None,
        "published": False,
    },
    {
        "externalId": "help-draft-cad-upgrade-notes",
        "itemType": HELP,
        "title": "Draft: CAD Upgrade Release Notes",
        "summary": "Not yet published: what changes in the next CAD release.",
        "body": "Draft release notes for the CAD upgrade: new map layers and status keys.",
        "category": "CAD How-To",
        "thumbnailUrl": None,
        "url": f"{SITE}/items/help-draft-cad-upgrade-notes",
        "requiredLicenseName": None,
        "published": False,
    },
)


def _record(
    external_id: str,
    item_type: str,
    title: str,
    summary: str,
    body: str,
    category: str,
    license_name: str | None,
) -> dict[str, Any]:
    return {
        "externalId": external_id,
        "itemType": item_type,
        "title": title,
        "summary": summary,
        "body": body,
        "category": category,
        "thumbnailUrl": f"{THUMBNAILS}/{external_id}.png",
        "url": f"{SITE}/items/{external_id}",
        "requiredLicenseName": license_name,
        "published": True,
    }


def _sentences(items: tuple[str, ...]) -> str:
    return " ".join(f"{item.rstrip('.?')}." if not item.endswith("?") else item for item in items)


def _protocol_records(protocol: Protocol) -> Iterator[dict[str, Any]]:
    name, also = protocol.name, protocol.also
    yield _record(
        f"coach-{protocol.slug}-refresher",
        COACHING,
        f"Protocol Refresher: {name}",
        f"Key questions, pre-arrival instructions and common pitfalls for {name.lower()} "
        f"calls ({also}).",
        f"{name} calls are also reported as {also}. Verify the location and callback number "
        f"first, then work the protocol. Key questions: {_sentences(protocol.questions)} "
        f"Pre-arrival instructions: {_sentences(protocol.instructions)} "
        f"Common pitfalls: {_sentences(protocol.pitfalls)} Coaching tip: read each key "
        "question as written and give instructions step by step, confirming the caller "
        "completed each one.",
        "Protocol Refreshers",
        PROTOCOL_LICENSE,
    )
    yield _record(
        f"coach-{protocol.slug}-scenario",
        COACHING,
        f"Call Review Scenario: {name}",
        f"A recorded {name.lower()} call reviewed step by step: {protocol.scenario.lower()}.",
        f"Scenario: {protocol.scenario}. Listen to the call and score it. What went well: "
        f"the call-taker verified the address and asked: {protocol.questions[0]} "
        f"What to improve: {protocol.pitfalls[0]}. The protocol's instructions for this "
        f"call: {_sentences(protocol.instructions)} Discussion: how would you handle "
        f"a caller reporting {also.split(',')[0]}?",
        "Call Review Scenarios",
        REVIEW_LICENSE,
    )
    yield _record(
        f"help-{protocol.slug}-quick-reference",
        HELP,
        f"Quick Reference Card: {name}",
        f"Printable quick reference of the {name.lower()} key questions and instructions.",
        f"Open the {name} guide card from the incident's Protocol tab, or print this quick "
        f"reference for your console. Key questions: {_sentences(protocol.questions)} "
        f"Instructions: {_sentences(protocol.instructions)}",
        "Quick Reference Cards",
        None,
    )


def _skill_record(skill: tuple[str, str, str, str, str]) -> dict[str, Any]:
    slug, category, title, summary, body = skill
    license_name = WELLNESS_LICENSE if category == "Wellness and Resilience" else None
    return _record(f"coach-{slug}", COACHING, title, summary, body, category, license_name)


def _article_record(article: Article) -> dict[str, Any]:
    steps = " ".join(f"Step {number}: {step}." for number, step in enumerate(article.steps, 1))
    body = f"{article.summary} {steps}"
    if article.note:
        body += f" Note: {article.note}"
    return _record(
        f"help-{article.slug}",
        HELP,
        article.title,
        article.summary,
        body,
        article.category,
        article.license,
    )


def catalog_records() -> list[dict[str, Any]]:
    """The demo catalog as JSON Lines records (what `resource-center import` reads)."""
    records: list[dict[str, Any]] = []
    for protocol in PROTOCOLS:
        records.extend(_protocol_records(protocol))
    records.extend(_skill_record(skill) for skill in SKILLS)
    records.extend(_article_record(article) for article in ARTICLES)
    records.extend(DRAFT_RECORDS)
    return records


def catalog_lines() -> list[str]:
    return [json.dumps(record, ensure_ascii=False) for record in catalog_records()]


def cached_index() -> "IndexArtifact | None":
    """The demo index saved by an earlier start, if it is there and readable."""
    from psap.resource_center.engine import artifact  # noqa: PLC0415 - heavy engine

    try:
        return artifact.from_bytes(EMBEDDING_CACHE.read_bytes())
    except (OSError, ValueError, KeyError):
        return None


def save_cached_index(index: "IndexArtifact") -> None:
    from psap.resource_center.engine import artifact  # noqa: PLC0415 - heavy engine

    EMBEDDING_CACHE.parent.mkdir(parents=True, exist_ok=True)
    partial = EMBEDDING_CACHE.with_name(EMBEDDING_CACHE.name + ".partial")
    partial.write_bytes(artifact.to_bytes(index))
    partial.replace(EMBEDDING_CACHE)


def seed_resource_center(tenant_ids: list[int]) -> dict[str, Any]:
    """Loads the catalog, grants the demo licenses and imports, and builds the index (the
    first start embeds ~200 documents; later starts reuse the cached vectors)."""
    from psap.resource_center.indexing import rebuild_index  # noqa: PLC0415 - heavy engine

    started = time.perf_counter()
    table = resource_center_table()
    now = utc_now()
    # The stack starts empty: batch writes, not one transaction per item (moto copies the
    # whole table for every transaction item, which made this take seconds).
    created = store.bulk_create(table, [catalog.parse_line(text) for text in catalog_lines()], now)
    for position, tenant_id in enumerate(tenant_ids):
        for license_name in DEMO_LICENSES.get(position, ()):
            catalog.grant_license(table, tenant_id, license_name, now)
    if tenant_ids:
        # Tenant 1 imported two items; one of them changed since (update available).
        first = tenant_ids[0]
        catalog.record_import(table, first, "coach-cardiac-arrest-refresher", now)
        catalog.record_import(table, first, "help-ali-rebid", now)
        changed = next(r for r in catalog_records() if r["externalId"] == "help-ali-rebid")
        changed["body"] += " Tip: rebid again if the uncertainty radius is over 300 meters."
        catalog.import_catalog(table, [json.dumps(changed)], now)
    loaded = time.perf_counter()
    cached = cached_index()
    rebuilt, index = rebuild_index(
        table, search_index_bucket(), reuse=[cached] if cached is not None else []
    )
    if rebuilt.embedded and index is not None:
        save_cached_index(index)
    print(
        f"resource center: {len(catalog_records())} catalog items in "
        f"{loaded - started:.1f} s; search index of {rebuilt.documents} documents "
        f"({rebuilt.embedded} embedded, {rebuilt.reused} from the cache) "
        f"in {rebuilt.seconds:.1f} s",
        flush=True,
    )
    return {
        "catalogItems": len(created),
        "indexedDocuments": rebuilt.documents,
        "embedded": rebuilt.embedded,
        "loadSeconds": round(loaded - started, 2),
        "indexSeconds": round(rebuilt.seconds, 2),
    }


def demo_catalog_items() -> "list[CatalogItem]":
    """The published demo records as catalog items with ids 1, 2, ... in catalog order."""
    from psap.resource_center.models import CatalogItem, CatalogRecord  # noqa: PLC0415

    records = [CatalogRecord.model_validate(record) for record in catalog_records()]
    return [
        CatalogItem(
            id=number,
            version=1,
            content_hash=record.content_hash(),
            record=record,
            created_at="2026-01-15T08:30:00.000Z",
            updated_at="2026-01-15T08:30:00.000Z",
        )
        for number, record in enumerate(records, start=1)
        if record.published
    ]


def demo_index_in_memory() -> "tuple[IndexArtifact, list[str]]":
    """The demo catalog indexed without a table or bucket (relevance test, bench), reusing
    and refreshing the same embedding cache as the local stack. Returns the artifact and the
    externalId of each of its documents, by position."""
    from psap.resource_center.engine.builder import build_artifact  # noqa: PLC0415
    from psap.resource_center.engine.encoder import document_encoder  # noqa: PLC0415

    items = demo_catalog_items()
    cached = cached_index()
    index, stats = build_artifact(
        items, 1, "2026-01-15T08:30:00.000Z", document_encoder(), [cached] if cached else []
    )
    if stats.embedded:
        save_cached_index(index)
    by_id = {item.id: item.record.external_id for item in items}
    return index, [by_id[int(item_id)] for item_id in index.ids]
