package extractor

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
)

// TestSlotsOfEverydayPhrasings: where the speaker lives, their clock, their car or
// device, an attribute of theirs, each told as people tell it, lands in the slot a later
// value replaces; and what only resembles one does not. The sentences were written for
// this test.
func TestSlotsOfEverydayPhrasings(t *testing.T) {
	tests := []struct {
		name, text, key, holds string // key "" with holds "": no candidate may have keyOf
		keyOf                  string
	}{
		{"live with a particle", "We live out in Bendigo, so the drive in is long.", "user.location", "Bendigo", ""},
		{"based out of", "I'm based out of Tallinn these days.", "user.location", "Tallinn", ""},
		{"home named by place", "Our flat in Porto gets the afternoon sun.", "user.location", "Porto", ""},
		{"here for good", "We're in Halifax for good now.", "user.location", "Halifax", ""},
		{"a visit is no home", "I'm in Lyon for a conference.", "", "", "user.location"},
		{"settled zh", "我们现在在厦门定居了。", "user.location", "厦门", ""},
		{"moved with particles", "We sold the house and moved out to Galt last spring.", "user.location", "Galt", ""},
		{"zone abbreviation", "I'm on AEST now that I'm back.", "user.timezone", "AEST", ""},
		{"zone offset", "Our team works on UTC-3.", "user.timezone", "UTC-3", ""},
		{"zone word with a time", "Calls at 7 Mountain suit me best.", "user.timezone", "Mountain", ""},
		{"zone by city", "Please keep everything on Madrid time for me.", "user.timezone", "Madrid", ""},
		{"zone zh", "以后时间都按悉尼那边算吧。", "user.timezone", "悉尼", ""},
		{"no zone in a park", "We had lunch in Central Park with my cousins.", "", "", "user.timezone"},
		{"car by what cars do", "My old Skoda Octavia needs new tyres before winter.", "user.vehicle", "Skoda Octavia", ""},
		{"driving a new car", "I'm driving a Volvo XC40 now.", "user.vehicle", "Volvo XC40", ""},
		{"car zh", "我那辆老宝来开了八年了，油耗越来越高。", "user.vehicle", "宝来", ""},
		{"device replaced zh", "换了台联想拯救者，屏幕大多了。", "user.device.computer", "拯救者", ""},
		{"phone zh", "我换了部一加12，充电很快。", "user.device.phone", "一加12", ""},
		{"attribute", "My badge number is Q-5521.", "user.attr.badge_number", "Q-5521", ""},
		{"attribute zh", "我的储物柜号是 C17。", "user.attr.储物柜号", "C17", ""},
		{"relation's attribute", "My husband's shoe size is 44.", "relation.husband.shoe_size", "44", ""},
		{"relation's birthday", "My nephew Jonas turns eleven next Saturday.", "relation.nephew.birthday", "Jonas", ""},
		{"an appointment is no taste", "Keep my Thursdays clear, I have choir.", "", "", "taste.choir"},
		{"a relation is no attribute", "My older brother is moving to Perth.", "", "", "user.attr.older_brother"},
		{"plural attribute has none", "My cousins are Lena and Omar.", "", "", "user.attr.cousins"},
		// Ages, school years and shifts: values that change as time goes on.
		{"relation's age", "Our eldest daughter Priya is 11 and mad about football.", "relation.daughter.age", "11", ""},
		{"relation's age zh", "我闺女今年7岁，刚上二年级。", "relation.daughter.age", "7", ""},
		{"age dropped relation zh", "老公下个月就40岁了。", "relation.husband.age", "40", ""},
		{"a time is no age", "My son is 5 minutes away.", "", "", "relation.son.age"},
		{"a school year by name", "Tomas is in 2nd grade at Brookside now.", "person.tomas.school", "2nd grade", ""},
		{"a child's school zh", "我女儿转学到实验二小了。", "relation.daughter.school", "实验二小", ""},
		{"night work", "I pull overnights at the depot, so mornings are my night.", "user.attr.shift", "overnights", ""},
		{"shift moved zh", "我下个月起换到早班。", "user.attr.shift", "早班", ""},
		{"a shift is no place zh", "我调到中班了。", "", "", "user.location"},
		{"a department is no place zh", "我调到财务部了。", "", "", "user.location"},
		{"working hours", "I work 8 to 4 most days at the lab.", "user.attr.work_hours", "8 to 4", ""},
		{"working hours zh", "我现在是早八点到晚五点上班。", "user.attr.work_hours", "八点", ""},
		// Things and services told as changed, in the slot the device and service rules use.
		{"device upgraded", "Traded in my laptop, it's a ThinkPad X1 now.", "user.device.computer", "ThinkPad", ""},
		{"phone changed zh", "手机换成小米了。", "user.device.phone", "小米", ""},
		{"car driven zh", "我开的是一辆二手思域。", "user.vehicle", "思域", ""},
		{"bank with", "We bank with Nationwide for everything.", "user.attr.bank", "Nationwide", ""},
		{"accounts moved", "Moved my checking account over to Monzo.", "user.attr.bank", "Monzo", ""},
		{"raised by someone", "The gym raised the membership fee to $65.", "user.attr.membership_fee", "$65", ""},
		{"landlord rise zh", "房东又涨房租了，现在七千。", "user.attr.房租", "七千", ""},
		{"new provider", "We found a new dentist near the station, Dr. Ruiz.", "user.provider.dentist", "Ruiz", ""},
		{"provider switched", "Switched barbers to the place on Hope Street.", "user.provider.hair", "Hope Street", ""},
		{"provider zh", "换了个理发师，在小区门口那家。", "user.provider.hair", "小区门口", ""},
		{"promoted zh", "我上个月升主任了。", "user.role", "主任", ""},
		{"diet resumed", "I'm back to eating chicken again after five vegan years.", "food.diet", "chicken", ""},
		{"diet resumed zh", "我又开始吃肉了。", "food.diet", "吃肉", ""},
		{"pet food", "Our cat only eats Royal Canin wet food.", "pet.cat.food", "Royal Canin", ""},
		{"pet food switched", "We moved Biscuit onto a grain-free kibble.", "pet.biscuit.food", "grain-free", ""},
		{"pet food zh", "我家猫一直吃渴望猫粮。", "pet.cat.food", "渴望", ""},
		{"at a gym zh", "我平时在超级猩猩健身。", "habit.健身", "超级猩猩", ""},
		{"meets on a day zh", "我们每周四晚上练合唱。", "user.attr.合唱", "周四", ""},
		// Routines with their value, in slots of their own.
		{"per day", "I smoke maybe five cigarettes a day, trying to quit.", "drink.cigarette", "five", ""},
		{"per day zh", "我一天要喝两杯奶茶。", "drink.奶茶", "两杯", ""},
		{"bedtime", "Our twins go to bed at 7:30 on school nights.", "", "", "relation.twin.bedtime"},
		{"bedtime of children", "Our children go to bed at 7:30 on school nights.", "relation.child.bedtime", "7:30", ""},
		{"bedtime zh", "我儿子一般九点上床。", "relation.son.bedtime", "九点", ""},
		{"office", "I work out of the Leeds office most weeks.", "user.work_location", "Leeds office", ""},
		{"an office is no home", "I'm based in the Bristol office.", "", "", "user.location"},
		{"office zh", "我下个月调到成都分公司。", "user.work_location", "成都分公司", ""},
		{"tool zh", "我平时用滴答清单管理任务。", "tool.todo", "滴答清单", ""},
		{"tool moved zh", "账本都搬到随手记上了。", "tool.budget", "随手记", ""},
		{"renovation plan", "We're hoping to redo the bathroom before winter.", "plan.renovation.bathroom", "bathroom", ""},
		{"renovation paused", "The bathroom remodel got postponed again.", "plan.renovation.bathroom", "postponed", ""},
		{"renovation zh", "我们打算明年把卫生间翻新一下。", "plan.renovation.卫生间", "卫生间", ""},
		{"a named person moves", "Oskar moved to Rotterdam last spring.", "person.oskar.location", "Rotterdam", ""},
		{"a relation moves zh", "我哥去年搬到青岛了。", "relation.brother.location", "青岛", ""},
		{"reports to zh", "我现在向周经理汇报。", "relation.manager.name", "周经理", ""},
		{"which manager", "My direct manager is Ines Duarte.", "relation.manager.name", "Ines Duarte", ""},
		{"injury", "I sprained my ankle on the stairs.", "user.health.injury.ankle", "ankle", ""},
		{"own age", "I'm 58 and only now learning to swim.", "user.age", "58", ""},
		{"own age turned", "Turned thirty on Saturday, still processing it.", "user.age", "thirty", ""},
		{"a time is no age", "I'm 15 minutes behind, start without me.", "", "", "user.age"},
		{"own age zh", "我今年二十七岁。", "user.age", "二十七", ""},
		{"a relation's age is not mine zh", "我女儿下个月满10岁。", "", "", "user.age"},
		{"relation's new job", "My brother-in-law just joined Arup as a graduate.", "relation.brother_in_law.employer", "Arup", ""},
		{"relation's new job zh", "我老婆下个月开始去招行上班。", "relation.wife.employer", "招行", ""},
		{"relation's birthday zh", "我姐生日是9月9号。", "relation.sister.birthday", "9月9", ""},
		{"relation's lessons", "Our daughter takes ballet classes after school.", "relation.daughter.lessons", "ballet", ""},
		{"a relation's shift is not mine zh", "我老公值夜班，白天睡觉。", "", "", "user.attr.shift"},
		{"commute by a time", "I catch the 6:55 most mornings.", "user.commute", "6:55", ""},
		{"no commute", "Working from home full time since the merger.", "user.commute", "home", ""},
		{"commute by a time zh", "现在改坐6点50的班车。", "user.commute", "6点50", ""},
		{"bedtime", "I usually go to bed around 10:30 on weeknights.", "schedule.sleep", "10:30", ""},
		{"bedtime zh", "我最近都十二点以后才睡。", "schedule.sleep", "十二点", ""},
		{"reading", "I'm reading Wolf Hall at the moment, slowly.", "user.reading", "Wolf Hall", ""},
		{"watching", "We've started Slow Horses, two episodes a night.", "user.watching", "Slow Horses", ""},
		{"reading zh", "最近在读《活着》。", "user.reading", "活着", ""},
		{"watching zh", "这周开始追《狂飙》了。", "user.watching", "狂飙", ""},
		{"saving for", "We're saving up for a campervan.", "user.savings_goal", "campervan", ""},
		{"saving for zh", "我在存钱买相机。", "user.savings_goal", "相机", ""},
		{"married to", "Married to Ingrid, no kids yet.", "relation.spouse.name", "Ingrid", ""},
		{"team", "I work on the search ranking team at the moment.", "user.team", "search ranking", ""},
		{"team moved", "Switched to the mobile team in October.", "user.team", "mobile", ""},
		{"team zh", "上周调到了数据组。", "user.team", "数据组", ""},
		{"medication", "I'm on sertraline, 50mg in the mornings.", "medication.sertraline", "50mg", ""},
		{"medication dose changed", "The GP upped my sertraline to 100mg.", "medication.sertraline", "100mg", ""},
		{"medication zh", "我在吃阿托伐他汀，每天一片。", "medication.阿托伐他汀", "一片", ""},
		{"rented home", "We rent a studio in Leith, tiny but cheap.", "user.location", "Leith", ""},
		{"rented home zh", "我在天通苑租了个一居。", "user.location", "天通苑", ""},
		{"diet zh", "我平时吃素。", "food.diet", "吃素", ""},
		{"from and living", "I'm originally from Tromsø but living in Bergen now.", "user.location", "Bergen", ""},
		// A plan told again in other words meets its first telling by the event's noun.
		{"event and its day", "The school play is Friday at 6.", "plan.play.school", "Friday", ""},
		{"event cancelled", "We had to cancel the vet appointment, the cat's fine now.", "plan.appointment.vet", "cancel", ""},
		{"event moved by someone", "The clinic pushed my MRI scan to next Wednesday.", "plan.scan.mri", "Wednesday", ""},
		{"flight by where to", "Flying out to Lisbon on Sunday night.", "plan.flight.lisbon", "Lisbon", ""},
		{"flight changed", "My flight was delayed to 9pm, ugh.", "plan.flight", "9pm", ""},
		{"car service", "The van is booked in for an MOT on the 4th.", "plan.service.car", "MOT", ""},
		{"appointment zh", "我下周三去复查。", "plan.复查", "复查", ""},
		{"event moved zh", "医院把手术推迟到下个月了。", "plan.手术", "下个月", ""},
		{"event place zh", "年会定在三亚。", "plan.年会", "三亚", ""},
		{"flight zh", "明天一早飞昆明。", "plan.航班.去昆明的", "昆明", ""},
		{"flight changed zh", "航班延误了，改到晚上九点。", "plan.航班", "九点", ""},
		// How the speaker gets to work, one slot whatever the way.
		{"commute by bus", "I catch the 8:15 bus to work most days.", "user.commute", "8:15 bus", ""},
		{"commute by bike", "These days I mostly cycle in, rain or shine.", "user.commute", "cycles in", ""},
		{"commute zh", "我现在每天开车去公司，路上半小时。", "user.commute", "开车", ""},
		{"someone else's commute", "My daughter takes the tram to school.", "", "", "user.commute"},
		{"someone else's commute zh", "我弟弟每天坐公交上班。", "", "", "user.commute"},
		{"a ride in the park is no commute", "I bike in the forest on Sundays.", "", "", "user.commute"},
		// A relation's taste lives in the relation's slots, never the speaker's own.
		{"relation's dislike", "My father can't stand mushrooms.", "relation.father.food.ingredient.mushroom", "mushrooms", ""},
		{"relation's allergy", "My niece is allergic to kiwi.", "relation.niece.allergy.kiwi", "kiwi", ""},
		{"relation's diet", "My grandma is vegan these days.", "relation.grandmother.diet", "vegan", ""},
		{"relation's taste zh", "我老公不吃香菜。", "relation.husband.food.ingredient.cilantro", "香菜", ""},
		{"relation's taste is not the speaker's", "我婆婆不吃香菜。", "", "", "food.ingredient.cilantro"},
		{"family told with the", "The hubby is obsessed with woodworking.", "relation.husband.taste.woodworking", "woodworking", ""},
		// Things the speaker uses, told by the setup.
		{"laptop as setup", "My main machine is a Dell XPS, nothing fancy.", "user.device.computer", "Dell XPS", ""},
		{"all in on a device", "I'm all in on Linux now.", "user.device.computer", "Linux", ""},
		{"phone by measure word zh", "上个月买了个Pixel 9。", "user.device.phone", "Pixel 9", ""},
		// Awaited deliveries, promotions, where one has lived since, where parcels go.
		{"delivery by arrival", "Our new sofa should arrive on Tuesday.", "plan.delivery.sofa", "sofa", ""},
		{"promoted", "I just got promoted to head of design!", "user.role", "head of design", ""},
		{"someone else promoted", "My cousin got promoted to captain.", "", "", "user.role"},
		{"lived since", "I've been living in Nairobi since 2019.", "user.location", "Nairobi", ""},
		{"a short stay is no home", "I've been in Denver for three days.", "", "", "user.location"},
		{"address", "Our mailing address is PO Box 4410, Juneau.", "user.address", "PO Box 4410", ""},
		{"address zh", "快递以后都送到我公司前台吧。", "user.address", "前台", ""},
		{"relation's address zh", "我爸家地址是解放路9号。", "", "", "user.address"},
		// Where a thing of the speaker's is, and the tool a job of theirs uses.
		{"thing hosted", "Our repo is hosted on Codeberg these days.", "thing.repo", "Codeberg", ""},
		{"thing registered", "The company is registered in Delaware, for tax reasons.", "thing.company", "Delaware", ""},
		{"tool of the team zh", "我们团队记账用的是用友，报销走钉钉。", "tool.记账", "用友", ""},
		{"a relation's phone is no name zh", "我妈用的是华为。", "", "", "relation.mother.name"},
		// Facts told inside a request.
		{"pet by breed", "Our corgi Biscotti sheds like crazy lately.", "pet.dog.name", "Biscotti", ""},
		{"pet by breed zh", "我家金毛豆豆最近老掉毛，正常吗？", "pet.dog.name", "豆豆", ""},
		{"relation's language", "Write it simply for my grandpa, he only speaks Greek.", "relation.grandfather.language", "Greek", ""},
		{"relation's language zh", "给我外婆写短点，她只听得懂粤语。", "relation.grandmother.language", "粤语", ""},
		{"height", "Suggest a road bike frame size, I'm 5'7\".", "user.height", "5'7", ""},
		{"home town", "Book me the cheapest flight home to Kraków over Easter.", "user.origin", "Kraków", ""},
		{"home town zh", "国庆想回遵义老家看看，帮我查下高铁。", "user.origin", "遵义", ""},
		{"relation named after zh", "帮我给房东发个消息，她叫何丽萍。", "relation.房东.name", "何丽萍", ""},
		{"familiar name zh", "我同事小林明天请假，帮我改下排班。", "relation.colleague.name", "小林", ""},
		{"no familiar name zh", "我老婆小时候在大连长大。", "", "", "relation.wife.name"},
		{"years of a line of work zh", "帮我润色下简历，我干了八年的会计。", "user.role", "会计", ""},
		// Office days, pay, the device used now: one slot each.
		{"office days", "I go into the office on Wednesdays, the rest is remote.", "schedule.office_days", "Wednesdays", ""},
		{"office days zh", "我一般周三去公司坐班。", "schedule.office_days", "周三", ""},
		{"salary", "I take home around $4,200 a month after tax.", "user.salary", "4,200", ""},
		{"raise zh", "上个月加薪了，现在到手九千八。", "user.salary", "九千八", ""},
		{"device now zh", "旧手机摔坏了，现在用小米14，拍照不错。", "user.device.phone", "小米14", ""},
		{"a relation's device zh", "我爸现在用华为。", "", "", "user.device.phone"},
		// A question states nothing, but the names it uses are the speaker's.
		{"pet named in a question", "Is it okay that our whippet Comet sleeps all day?", "pet.dog.name", "Comet", ""},
		{"relation named in a question", "What should I cook for my aunt Greta on Sunday?", "relation.aunt.name", "Greta", ""},
		{"home town in a question", "Are there night trains home to Ljubljana in winter?", "user.origin", "Ljubljana", ""},
		{"a question asks the name zh", "你还记得我家猫叫什么吗？", "", "", "pet.cat.name"},
		{"what if is no fact", "What if my cat Mango got out?", "", "", "pet.cat.name"},
		// Names told in passing.
		{"name here", "Hi, Tobias here, I run the night desk at the Courier.", "user.name", "Tobias", ""},
		{"over here is no name", "Over here, the snow hasn't stopped.", "", "", "user.name"},
		{"name by surname zh", "我是郑雨桐，刚入职的测试工程师。", "user.name", "郑雨桐", ""},
		{"a job is no name zh", "我是护士，经常倒班。", "", "", "user.name"},
		{"a title is no name zh", "我是刘总，下午三点的会照开。", "", "", "user.name"},
		// A transfer moves the place of work with the home.
		{"transfer zh", "我今年三月调到了西安。", "user.work_location", "西安", ""},
		{"city of work is a place zh", "我在洛阳上班。", "user.work_location", "洛阳", ""},
		// Chat style: shorthand, dropped subjects, a clause going on without its subject.
		{"shorthand job", "ok so im a line cook at a diner in reno", "user.role", "line cook", ""},
		{"dropped subject, regular verb", "Transferred to the Denver branch in spring, loving it.", "", "", "user.name"},
		{"new role after a comma", "I left the library, starting as a school counselor in August.", "user.role", "school counselor", ""},
		{"since the move", "The Bergen rain is something else since the move.", "user.location", "Bergen", ""},
		{"a trip is no move", "Since the move I fly to Boston a lot for work.", "", "", "user.location"},
		{"joined as a job", "I joined a design studio called Fernhill as a junior designer.", "user.employer", "Fernhill", ""},
		{"joined a club is no job", "I joined a running club called Striders.", "", "", "user.employer"},
		{"condition", "I've got epilepsy, so no strobe lights please.", "user.health.epilepsy", "epilepsy", ""},
		{"condition by adjective", "I'm diabetic, keep desserts small.", "user.health.diabetes", "diabetic", ""},
		{"diet word", "I'm dairy-free these days.", "food.diet", "dairy-free", ""},
		{"surname then name zh", "我姓严，叫严可欣，是新来的会计。", "user.name", "严可欣", ""},
		{"line of work zh", "我是做装修的，白天都在工地。", "user.role", "装修", ""},
		{"left by where zh", "超市那边辞了，准备开始去物流公司做调度员。", "user.employer", "物流公司", ""},
		{"switched employer zh", "我上个月跳槽到滴滴了。", "user.employer", "滴滴", ""},
		{"a span is no place zh", "我搬来三个月了，还没交到朋友。", "", "", "user.location"},
		// A profile pasted as a form, terse states, kinship words used as names.
		{"form field", "Name: Ottilie Brandt. Title: night editor. City: Bremen.", "user.role", "night editor", ""},
		{"form fields on one line", "Company: Vantor Labs | Time zone: CET", "user.timezone", "CET", ""},
		{"form zh", "称呼：阿宁，城市：珠海", "user.location", "珠海", ""},
		{"a label is no field", "Name: that's the hard part of any project.", "", "", "user.name"},
		{"marital status", "Happily married for nine years now.", "user.marital_status", "married", ""},
		{"marital zh", "我们上个月订婚了。", "user.marital_status", "订婚", ""},
		{"parent by kinship word", "Grandpa broke his wrist, so I'm driving him around.", "", "", "user.name"},
		{"bare fan of", "Huge fan of Korean food.", "food.cuisine.korean", "a huge fan", ""},
		// Measures and arrangements that change, each in its slot.
		{"weight", "I weigh about 68 kg these days.", "user.weight", "68 kg", ""},
		{"weight down to", "Finally down to 190 lbs.", "user.weight", "190 lbs", ""},
		{"weight zh", "最近减到了58公斤。", "user.weight", "58公斤", ""},
		{"someone else's weight", "My brother weighs 90 kg.", "", "", "user.weight"},
		{"working week", "I work Monday through Thursday now.", "schedule.work_week", "Thursday", ""},
		{"working week zh", "我们公司是大小周。", "schedule.work_week", "大小周", ""},
		{"favourite by label", "Favourite podcast: Hardcore History.", "favorite.podcast", "Hardcore History", ""},
		{"favourite zh", "我最喜欢的面馆是老碗面。", "favorite.面馆", "老碗面", ""},
		{"relation's school", "My nephew just started at Hillcrest Academy.", "relation.nephew.school", "Hillcrest Academy", ""},
		{"a school is no home", "My niece moved to Brookside High this year.", "", "", "relation.niece.location"},
		{"relation's employer zh", "我姐姐在招商银行上班。", "relation.sister.employer", "招商银行", ""},
		{"relation's new employer zh", "我哥哥上个月跳槽到了顺丰。", "relation.brother.employer", "顺丰", ""},
		{"a relation going somewhere is no job zh", "女儿现在换到王老师那学琴了。", "", "", "relation.daughter.employer"},
		{"time bound", "No calls after 6pm on weekdays, please.", "schedule.not_after", "after 6pm", ""},
		{"pet called", "Our rabbit is called Clover.", "pet.rabbit.name", "Clover", ""},
		{"home rented in a place", "We rent a little cottage in Whitby.", "user.location", "Whitby", ""},
		{"relation's job", "My partner is a paramedic.", "relation.partner.job", "paramedic", ""},
		{"relation retired", "My mum finally retired in June.", "relation.mother.job", "retired", ""},
		{"relation retired zh", "我妈去年退休了。", "relation.mother.employer", "退休", ""},
		{"relation transferred zh", "我表哥调到了成都。", "relation.表哥.employer", "成都", ""},
		{"a verb is no name zh", "姐姐搬到杭州了。", "", "", "relation.sister.name"},
		{"pet renamed zh", "我们家兔子改名叫雪球了。", "pet.rabbit.name", "雪球", ""},
		{"diet ended", "I'm no longer vegan, I eat cheese again.", "food.diet", "no longer vegan", ""},
		{"diet ended zh", "我已经不吃素了。", "food.diet", "不吃素", ""},
		{"relation's business", "My aunt Rosa owns a flower stall at the market.", "relation.aunt.job", "flower stall", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands := extractOne(t, memory.Turn{Content: tt.text})
			keys := byKey(cands)
			if tt.keyOf != "" {
				if c, ok := keys[tt.keyOf]; ok {
					t.Fatalf("%q has a %s candidate: %q", tt.text, tt.keyOf, c.Content)
				}
				return
			}
			c, ok := keys[tt.key]
			if !ok {
				t.Fatalf("%q: no %s candidate in %+v", tt.text, tt.key, cands)
			}
			if !strings.Contains(c.Content, tt.holds) {
				t.Errorf("%q: %s candidate %q lacks %q", tt.text, tt.key, c.Content, tt.holds)
			}
		})
	}
}
