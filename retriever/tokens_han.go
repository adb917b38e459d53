package retriever

// cl100kSingleHan lists, in code point order, the 549 Han characters of U+4E00–U+9FFF that
// cl100k_base encodes as one token (counted with the gpt-tokenizer 4.0.0 npm package,
// cl100k_base encoding). Every other Han character costs 2 or 3 byte-level tokens.
// All are 3 bytes in UTF-8, so the string is searched as a sorted fixed-width array.
const cl100kSingleHan = "" +
	"一万三上下不与专业东两个中串为主么义之也书了事二于五些交产享京人亿今介从他付代以们件价任份企优会传但位体何余作你使例供価" +
	"保信修倍值停像元先入全公共关其具内円册再写出击分列则初利别到制前力功加务动動包化北区十午华单南即历原去县参及友反发取变口" +
	"只可台右号司合同名后向否含听启告员周命和品哈商問器四回因国图土在地场址型城基報場填增声处备复外多大天失头女好如始子字存学" +
	"安宋完定实审客家容密对导将小少尔就局展山岁州工左已市布常平年并广序库应店度建开异式引张当录形影径待後得微心必志态思性总息" +
	"您情意感成我或户所手打找技投报拉持指按换据排接推提播支收改放政效数整文料断新方族无日时明易星是時景更最月有服期木未本机权" +
	"束条来板构析果查标样核格案检模次款止正此步歳段每比民気水求江汽没治法注活流海消清游源火点無然片版物特率环现球理生用由电男" +
	"画界番登的监目直相省看県真知码确示社票私种科秒称移程稍税稿空立站章端笑符第等签简算管箱米类系素索约级线组经结给络统编网置" +
	"美老考者而联能自至色节英藏行表装西要見见规视角解言計記話読计认议记论设证评试话询该详语误说请读调象责败账货购费资起超路身" +
	"车转软载辑输达过运近还这进连述退送选通速造連道邮部都配释里重量金钟钮链销错键长開間関门闭问间队阳陆限院除雅集雷需非面音页" +
	"项预频题额首验高黑"
